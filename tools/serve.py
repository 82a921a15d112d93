"""Start one app under its production server, against a database with the sample data.

    python -m tools.serve flask [--port 8000] [--proxy]

Uses DATABASE_URL if set, else the embedded Postgres (db/embedded.py); loads the
sample data if missing; runs <app>_app/serve.sh; prints the URL once /health
answers; on Ctrl-C or SIGTERM stops everything it started. The tests and
benchmark.sh start apps through the same functions. With --proxy, nginx
(tools/proxy.py) listens on the port and the app on a free one behind it.
"""

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from db import embedded
from db.load import load
from tools import proxy

ROOT = Path(__file__).resolve().parent.parent
APPS = sorted(path.parent.name.removesuffix("_app") for path in ROOT.glob("*_app/serve.sh"))


def start_database():
    """(DATABASE_URL, started_here): the given database, or the embedded one."""
    if os.environ.get("DATABASE_URL"):
        url, started = os.environ["DATABASE_URL"], False
    else:
        started = embedded.running_port() is None
        url = embedded.start()
    load(url)
    return url, started


def start_app(app, port, database_url, log=None, **settings):
    """Popen of the app's serve.sh; settings become environment variables."""
    if app not in APPS:
        raise ValueError(f"unknown app {app!r}; choose from {', '.join(APPS)}")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DATABASE_URL": database_url,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        **{key.upper(): str(value) for key, value in settings.items()},
    }
    return subprocess.Popen(
        ["sh", f"{app}_app/serve.sh"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stop() ends the workers too
    )


def wait_healthy(process, url, timeout=30.0):
    """Poll url + /health until 200; raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url}/health did not answer 200 within {timeout:.0f}s")


def stop(process, timeout=10.0):
    """SIGTERM the server, as docker stop does: its master stops its workers.
    Then SIGKILL whatever is left in its process group."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is empty: everything stopped by itself
    process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app", choices=APPS)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--proxy", action="store_true", help="behind nginx (proxy/api.inc)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    database_url, started_database = start_database()
    app_port = embedded.free_port() if args.proxy else args.port
    process = start_app(args.app, app_port, database_url)
    nginx = None
    try:
        wait_healthy(process, f"http://127.0.0.1:{app_port}")
        if args.proxy:
            nginx = proxy.start(app_port, args.port)
        url = f"http://127.0.0.1:{args.port}"
        print(f"{args.app} serves {url} (Ctrl-C stops it)", flush=True)
        process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        if nginx:
            proxy.stop(nginx)
        stop(process)
        if started_database:
            embedded.stop()


if __name__ == "__main__":
    main()
