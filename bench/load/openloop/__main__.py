"""python -m bench.load.openloop URL --rate R [...]: one run, one OPENLOOP_JSON line."""

import argparse
import asyncio
import json
import math
import sys

from bench import write_token

from . import MARKER, MAX_RATE, NAME
from .load import Load


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Open-loop HTTP load at a fixed rate.")
    parser.add_argument("url")
    offered = parser.add_mutually_exclusive_group(required=True)
    offered.add_argument("--rate", type=float, help="requests per second, for --duration")
    offered.add_argument(
        "--phases",
        type=phases,
        help="a schedule instead: SECONDS:RATE,... one phase after the other, e.g. 20:50,10:300",
    )
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds, with --rate")
    parser.add_argument(
        "--objective-ms", type=float, help="per second, count the 2xx within it (goodput)"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--body", help="a JSON body (sent with Content-Type: application/json)")
    parser.add_argument(
        "--write-token-file", help="the door's write token: Authorization: Bearer <token>"
    )
    args = parser.parse_args(argv)
    times = (args.duration, args.timeout, *(seconds for seconds, _ in args.phases or []))
    if args.objective_ms is not None:
        times += (args.objective_ms,)
    if args.connections < 1 or not all(math.isfinite(t) and t > 0 for t in times):
        parser.error("--connections, --duration, --timeout and the phases' seconds: positive")
    rates = [args.rate] if args.phases is None else [rate for _, rate in args.phases]
    if not all(0 < rate <= MAX_RATE for rate in rates):  # NaN too: no comparison holds
        parser.error(f"--rate: more than 0 and at most {MAX_RATE:,} requests/s")
    return args


def phases(text):
    """'20:50,10:300' -> [(20.0, 50.0), (10.0, 300.0)]: (seconds, rate) each."""
    try:
        return [tuple(float(part) for part in phase.split(":", 1)) for phase in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not SECONDS:RATE,...: {text!r}") from None


def main(argv=None):
    args = parse_args(argv)
    try:
        headers = write_token.headers(args.write_token_file)
    except write_token.BadToken as error:
        sys.exit(f"{NAME}: {error}")
    load = Load(
        args.url, args.rate, args.connections, args.duration, args.method, args.body, args.timeout,
        headers, args.phases, args.objective_ms,
    )  # fmt: skip
    try:
        if args.loop == "uvloop":
            import uvloop  # the apps' loop: less CPU per request than asyncio's

            result = uvloop.run(load.run())
        else:
            result = asyncio.run(load.run())
    except OSError as error:
        sys.exit(f"{NAME}: {error}")
    result["generator"]["command"] = [NAME, *(argv if argv is not None else sys.argv[1:])]
    print(MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
