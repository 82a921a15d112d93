"""nginx in front of one app, on 127.0.0.1: the deployment that makes slow
clients harmless to gunicorn's sync workers (proxy/api.inc says why).

    handle = start(app_port, listen_port, log)   # returns once nginx listens
    handle = start([port_1, port_2], listen_port, log)   # balances over copies
    stop(handle)

nginx runs in the foreground as a child process, with its own prefix in a
temporary folder (config, pid, temp files): nothing is written to /etc or /var.
Its errors go to `log`. Needs nginx on PATH (Debian: nginx-light); shutil.which
tells whether it is there.
"""

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools import ROOT, children

CONFIG = ROOT / "proxy" / "nginx.conf"  # the template; api.inc holds the rules
RULES = ROOT / "proxy" / "api.inc"
# nginx refuses to run its workers as root without a `user`; as root we run
# all of it as this unprivileged user instead.
SYSTEM_USER = "nobody"


@dataclass
class Proxy:
    process: subprocess.Popen
    prefix: str
    url: str


def binary():
    """nginx's path, or None where it is not installed."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")


def client_limit():
    """The clients nginx.conf takes at once: each holds two of its
    worker_connections, its own and the app's."""
    connections = re.search(r"worker_connections (\d+);", CONFIG.read_text())
    processes = re.search(r"worker_processes (\d+);", CONFIG.read_text())
    return int(connections[1]) * int(processes[1]) // 2


def version():
    """ "nginx/1.22.1", as `nginx -v` says it (on stderr)."""
    completed = subprocess.run([binary(), "-v"], capture_output=True, text=True)
    return (completed.stderr or completed.stdout).strip().removeprefix("nginx version: ")


def start(app_port, listen_port, log=None, timeout=10.0, extra_rules=""):
    """Start nginx on 127.0.0.1:listen_port in front of 127.0.0.1:app_port (a
    port, or a list of the ports of an app's copies: nginx balances round-robin
    over them, ./benchmark.sh --replicas); extra_rules (nginx directives, for
    the tests) are added to api.inc's.

    Raises FileNotFoundError without nginx, RuntimeError if it does not listen
    within `timeout` seconds (its errors are in `log`).
    """
    nginx = binary()
    if nginx is None:
        raise FileNotFoundError("nginx is not installed (Debian: apt-get install nginx-light)")
    prefix = _prefix(app_port, listen_port, extra_rules)
    user = SYSTEM_USER if os.geteuid() == 0 else None
    process = subprocess.Popen(
        [nginx, "-p", prefix, "-c", "nginx.conf", "-e", "stderr"],
        stdout=log,
        stderr=subprocess.STDOUT,
        user=user,
        start_new_session=True,
    )
    handle = Proxy(process, prefix, f"http://127.0.0.1:{listen_port}")
    try:
        _wait_listening(process, listen_port, timeout)
    except BaseException:
        stop(handle)
        raise
    return handle


@contextlib.contextmanager
def proxied(app_port, listen_port, log=None):
    """start() ... stop() around a with block (app_port: a port or a list);
    yields the handle."""
    handle = start(app_port, listen_port, log)
    try:
        yield handle
    finally:
        stop(handle)


def stop(handle, timeout=10.0):
    """SIGQUIT: nginx finishes the requests in flight, then exits. SIGKILL if
    it has not within `timeout` seconds. Removes the prefix folder."""
    children.stop(handle.process, signal.SIGQUIT, timeout)  # nginx's graceful shutdown
    shutil.rmtree(handle.prefix, ignore_errors=True)


def _prefix(app_port, listen_port, extra_rules=""):
    """A temporary nginx prefix: the rendered config, the rules, temp folders."""
    prefix = Path(tempfile.mkdtemp(prefix="nginx-"))
    config = CONFIG.read_text()
    config = config.replace("@APP_SERVERS@", upstream_servers(app_port))
    config = config.replace("@LISTEN_PORT@", str(listen_port))
    (prefix / "nginx.conf").write_text(config)
    (prefix / "api.inc").write_text(RULES.read_text() + extra_rules)
    (prefix / "tmp").mkdir()
    if os.geteuid() == 0:
        entry = pwd.getpwnam(SYSTEM_USER)
        for path in (prefix, prefix / "tmp", prefix / "nginx.conf", prefix / "api.inc"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    return str(prefix)


def upstream_servers(app_ports):
    """The `server` lines of the upstream block: one per port (an int: one)."""
    ports = [app_ports] if isinstance(app_ports, int) else list(app_ports)
    return "\n        ".join(f"server 127.0.0.1:{port};" for port in ports)


def _wait_listening(process, port, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited with status {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on {port} within {timeout:.0f}s")
