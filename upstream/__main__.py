"""python -m upstream: its command line (upstream/__init__.py says what it serves)."""

import argparse
import asyncio
import contextlib
import resource
import signal
import sys

import uvloop

from infra.delays import parse_jittered
from tools.command import Parser
from upstream import server


def ports(text):
    """--port: a port, or a comma list of them; 0 is a free one."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = [-1]
    if not all(0 <= value <= 65535 for value in values):
        raise argparse.ArgumentTypeError(f"not a port or a comma list of ports: {text!r}")
    return values


def delay(text):
    try:
        return parse_jittered(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def arguments(argv=None):
    parser = Parser(prog="python -m upstream", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--port",
        type=ports,
        action="extend",
        required=True,
        help="a port to listen on, one rating source each; repeat it, or give a comma list",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address (default 127.0.0.1)")
    parser.add_argument(
        "--delay",
        type=delay,
        default=parse_jittered("0"),
        help="before each rating: 50ms, or 50ms~10ms for give or take 10 (default 0)",
    )
    args = parser.parse_args(argv)
    chosen = [port for port in args.port if port]
    if len(set(chosen)) < len(chosen):
        parser.error(f"a port given twice: {','.join(map(str, args.port))}")
    return args


async def serve(args):
    """Listen on every port, say so, serve until SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    for each in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(each, stopped.set)
    service = server.Service(args.delay)
    try:
        listening = [await service.listen(args.host, port) for port in args.port]
    except OSError as error:
        sys.exit(f"upstream cannot listen: {error}")
    urls = " ".join(f"http://{args.host}:{port}" for port in listening)
    print(f"upstream listening on {urls} (delay {args.delay})", flush=True)
    with service.watching():
        await stopped.wait()
    await service.close()


def more_files():
    """The soft limit on open files raised to the hard one: every client's
    pooled connections stay open here (1,024 is a common soft limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft


def main(argv=None):
    args = arguments(argv)
    more_files()
    uvloop.run(serve(args))


if __name__ == "__main__":
    main()
