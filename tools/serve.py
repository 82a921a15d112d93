"""Start one app under its production server, against a database with the sample data.

    python -m tools.serve flask [--port 8000] [--proxy] [--tree DIR]

Uses DATABASE_URL if set, else the embedded Postgres (db/embedded.py); loads the
sample data if missing; runs <app>_app/serve.sh; prints the URL once /health
answers; on Ctrl-C, SIGTERM or SIGHUP (its terminal closed) stops everything
it started. A bad argument is refused in one line (exit 2). The tests and
benchmark.sh start databases and apps through the same two context managers,
database() and running(). With --proxy, nginx (tools/proxy.py) listens on the
port and the app on a free one behind it. With --tree, the app's package is
served from DIR, by DIR's own serve.sh: a state of the migration guide
(docs/migration/steps.sh serve N runs it so).
"""

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psycopg2

from db import embedded, roles
from db.load import load
from infra import ROOT, apps, production
from tools import children, proxy
from tools.command import INTERRUPTED, Parser, one_line, stop_on_signals

APPS = apps.names()  # Flask first: every comparison's baseline (infra/apps.py)


class AppNotStarted(RuntimeError):
    """The server exited, or /health did not answer in time; the message ends
    with the tail of its log."""


@contextlib.contextmanager
def database(name=embedded.DATABASE, url=None, **settings):
    """Yield the URL of a database holding the sample data: url, else the
    embedded server's database `name` (started with settings if it is not
    running, and stopped on exit by the last process using it:
    embedded.serving()). Never DATABASE_URL unless the caller passes it: a
    test or an example that writes must not write into a database of yours.
    Loading adds what is missing of the schema and the sample data, and
    changes no row that is there (db/load.py)."""
    with contextlib.ExitStack() as cleanup:
        if not url:
            url = cleanup.enter_context(embedded.serving(name, **settings))
        load(url)
        yield url


# A tree of docs/migration/steps.sh (one of the guide's states): its PACKAGE
# served by its own serve.sh from the TREE, the project's packages (common/)
# on PYTHONPATH. start_app(..., command=TREE_COMMAND, **tree_settings(tree, app)).
TREE_COMMAND = ["sh", "-c", 'cd "$TREE" && exec sh "$PACKAGE/serve.sh"']


def tree_settings(tree, app):
    """The settings TREE_COMMAND reads, for app's package in tree."""
    return {"tree": tree, "package": apps.get(app).module, "pythonpath": ROOT}


def start_app(app, port, database_url, log=None, command=None, **settings):
    """Popen of the app's serve.sh (or of command, another server's argv, run
    from the project folder); settings become environment variables."""
    declared = apps.get(app)  # KeyError names the apps there are
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": declared.pythonpath,
        "DATABASE_URL": database_url,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        **{key.upper(): str(value) for key, value in settings.items()},
    }
    return subprocess.Popen(
        command or declared.serve_command,
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stop() ends the workers too
    )


def wait_healthy(process, url, timeout=30.0, status=200):
    """Poll url + /health until it answers status (200, or 503 for an app whose
    database is meant to be unavailable); raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                answered = response.status
        except urllib.error.HTTPError as error:
            answered = error.code
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            answered = None
        if answered == status:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{url}/health did not answer {status} within {timeout:.0f}s")


# How long a server a stop finds starting may take to finish it, before it
# is stopped as it is.
STARTING = 10.0


def stop(process, timeout=10.0):
    """SIGTERM the server, as docker stop does: its master stops its workers.
    Then SIGKILL whatever is left in its process group."""
    children.stop(process, signal.SIGTERM, timeout)


def log_tail(path, lines=40):
    """The last lines of a log file ("" if it cannot be read)."""
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-lines:])
    except OSError:
        return ""


@dataclass
class Server:
    """An app serving at url, its log in log_path."""

    app: str
    url: str
    log_path: Path | None  # None: the server writes to this terminal
    process: subprocess.Popen

    def log_tail(self, lines=40):
        return log_tail(self.log_path, lines) if self.log_path else ""


class Relay:
    """A server's output, copied line by line to this terminal while it
    serves (./benchmark.sh --serve), and held back once its stop begins: a
    stop is one line. Sanic's manager stops its workers with SIGINT, and one
    that a Ctrl-C finds still starting prints the KeyboardInterrupt of its
    own stop. What the server says as it stops is kept in a file if it then
    exits with a status other than 0, and note() names it."""

    def __init__(self):
        self.held = None  # a list, from the stop on
        self.thread = None
        self.status, self.kept = 0, None

    def attach(self, stream):
        self.thread = threading.Thread(target=self.copy, args=(stream,), daemon=True)
        self.thread.start()

    def copy(self, stream):
        for line in iter(stream.readline, b""):
            if self.held is None:
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
            else:
                self.held.append(line)

    def hold(self):
        self.held = []

    def stopped(self, status):
        """The server has exited with status."""
        self.thread.join(timeout=5)
        self.status = status
        if status != 0 and self.held:
            with tempfile.NamedTemporaryFile("wb", prefix="serve-stop-", delete=False) as kept:
                kept.write(b"".join(self.held))
            self.kept = kept.name

    def note(self):
        """The end of the stop's one line: "" if the server stopped cleanly."""
        if self.status == 0:
            return ""
        said = f": what it said as it stopped is in {self.kept}" if self.kept else ""
        return f" (the server exited with status {self.status}{said})"


@contextlib.contextmanager
def running(
    app, port, database_url, log_path, timeout=30.0, command=None, health=200, relay=None,
    **settings,
):  # fmt: skip
    """Yield a Server once app answers /health with `health`; stop it on exit.
    Raises AppNotStarted (with its log's tail) if it does not come up.
    relay (a Relay, log_path None): its output goes through it, unbuffered."""
    if relay:
        settings = {"pythonunbuffered": 1, **settings}
    output = subprocess.PIPE if relay else None
    with open(log_path, "w") if log_path else contextlib.nullcontext(output) as log:
        process = start_app(app, port, database_url, log=log, command=command, **settings)
    if relay:
        relay.attach(process.stdout)
    server = Server(app, f"http://127.0.0.1:{port}", log_path and Path(log_path), process)
    try:
        try:
            wait_healthy(process, server.url, timeout, health)
        except RuntimeError as error:
            raise AppNotStarted(f"{app} did not start: {error}\n{server.log_tail()}") from None
        except KeyboardInterrupt:
            # Stopped as it starts (a Ctrl-C): let it finish starting first,
            # for up to STARTING seconds: a worker stopped while it loads
            # prints the KeyboardInterrupt of its stop.
            with contextlib.suppress(RuntimeError):
                wait_healthy(process, server.url, min(timeout, STARTING), health)
            raise
        yield server
    finally:
        if relay:
            relay.hold()
        stop(process)
        if relay:
            relay.stopped(process.returncode)


def direct_warning(app, proxied):
    """What to tell whoever serves a sync app without the proxy, or None."""
    if production.read(app).holds_thread and not proxied:
        return (
            f"warning: {app} runs on gunicorn's threads, one connection each: a few dozen "
            "idle or slow clients, or clients that never read an answer, stop it answering "
            "(docs/contract.md). Add --proxy to serve it behind nginx."
        )
    return None


def port_number(text):
    """0 (a free port) or a TCP port."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port (0-65535): {text!r}")
    return value


def arguments(argv=None):
    """serve's command line, checked: exit 2 with one line if it is wrong.
    Port 0 is a free one, chosen here."""
    parser = Parser(prog="./benchmark.sh --serve", description=__doc__.splitlines()[0])
    parser.add_argument("app", choices=APPS)
    parser.add_argument("--port", type=port_number, default=8000, help="0: a free one")
    parser.add_argument("--proxy", action="store_true", help="behind nginx (proxy/api.inc)")
    parser.add_argument(
        "--tree", type=Path, help="serve the app's package from this folder, by its serve.sh"
    )
    args = parser.parse_args(argv)
    if args.tree and not (args.tree / apps.get(args.app).module / "serve.sh").is_file():
        parser.error(f"--tree {args.tree} has no {apps.get(args.app).module}/serve.sh")
    try:
        args.port = embedded.free_port(args.port)
    except OSError:
        parser.error(f"--port {args.port} is taken: choose another, or 0 for a free one")
    if args.proxy and not proxy.binary():
        sys.exit("--proxy needs nginx: apt-get install nginx-light (Debian/Ubuntu)")
    return args


def main(argv=None):
    args = arguments(argv)
    if warning := direct_warning(args.app, args.proxy):
        print(warning, file=sys.stderr)
    tree = {"command": TREE_COMMAND, **tree_settings(args.tree, args.app)} if args.tree else {}
    relay = Relay()
    try:
        stop_on_signals()  # in the try: one held since benchmark.sh is delivered here
        with database(url=os.environ.get("DATABASE_URL")) as url:
            app_port = embedded.free_port() if args.proxy else args.port
            if not os.environ.get("DATABASE_URL"):  # the embedded one: films_app
                url = roles.app_url(url)
            with (
                running(args.app, app_port, url, log_path=None, relay=relay, **tree) as server,
                proxy.proxied(app_port, args.port) if args.proxy else contextlib.nullcontext(),
            ):
                print(f"{args.app} serves http://127.0.0.1:{args.port} (Ctrl-C stops it)")
                server.process.wait()
    except AppNotStarted as error:
        sys.exit(str(error))  # with the tail of the app's log
    except (OSError, RuntimeError, subprocess.CalledProcessError, psycopg2.Error) as error:
        # DATABASE_URL unreachable, Postgres or nginx not starting: one line
        sys.exit(f"serve failed: {one_line(str(error).strip())}")
    except KeyboardInterrupt:
        print(INTERRUPTED + relay.note(), file=sys.stderr)


if __name__ == "__main__":
    main()
