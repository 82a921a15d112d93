"""nginx in front of one app, on 127.0.0.1: the deployment that makes slow
clients harmless to gunicorn's threads (proxy/api.inc says why).

    handle = start(app_port, listen_port, log)   # returns once nginx listens
    handle = start([port_1, port_2], listen_port, log)   # balances over copies
    handle = start(app_port, listen_port, log, door=Door(token_file))
    handle = start(app_port, listen_port, log, limit=20)   # 20 in flight per copy
    stop(handle)

The door (proxy/door.conf, door.inc, tls.inc) is the deployed proxy's: the
JSON access log, the rate and connection limits, the write token (or writes open, said so),
and TLS with a certificate made for it (openssl). Plain, nginx measures what
the apps cost behind a buffering proxy; with the door, what the door adds.

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
DOOR_FILES = ["door.conf", "door.inc", "tls.inc"]
CERTIFICATE = (
    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1"
    " -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost"
)
# nginx refuses to run its workers as root without a `user`; as root we run
# all of it as this unprivileged user instead.
SYSTEM_USER = "nobody"


@dataclass(frozen=True)
class Door:
    """The deployed proxy's rules on top of api.inc's: the access log, the
    limits, TLS (with a self-signed certificate for 127.0.0.1), and the write
    token when token_file names one."""

    token_file: Path | None = None
    tls: bool = True
    # The limits' zones and checks as deployed, their thresholds out of a
    # benchmark's reach: its load comes from one address, which they would
    # answer 429 (./benchmark.sh --proxy door measures what they cost).
    bench: bool = False


BENCH_DOOR = Door(bench=True)
BENCH_DOOR_NOTE = (
    "with the door (proxy/door.conf: limit_req and limit_conn checked but out of reach, "
    "JSON access log to a file, TLS 1.2/1.3 with a P-256 certificate)"
)
BENCH_RATE = "10000000r/s"  # per address, both zones
BENCH_CONNECTIONS = 65535  # per address (nginx takes at most this)


@dataclass
class Proxy:
    process: subprocess.Popen
    prefix: str
    url: str

    @property
    def access_log(self):
        """The door's JSON lines (none without the door)."""
        return Path(self.prefix) / "access.log"


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


def start(app_port, listen_port, log=None, timeout=10.0, extra_rules="", door=None, limit=None):
    """Start nginx on 127.0.0.1:listen_port in front of 127.0.0.1:app_port (a
    port, or a list of the ports of an app's copies: nginx balances round-robin
    over them, ./benchmark.sh --replicas); extra_rules (nginx directives, for
    the tests) are added to api.inc's; door (a Door) adds the deployed
    proxy's rules, and the URL is https:// with TLS; limit: the requests each
    copy is given at once (its upstream server's max_conns), past which nginx
    refuses at once, 503 with Retry-After (./benchmark.sh --proxy limit).

    Raises FileNotFoundError without nginx, RuntimeError if it does not listen
    within `timeout` seconds (its errors are in `log`).
    """
    nginx = binary()
    if nginx is None:
        raise FileNotFoundError("nginx is not installed (Debian: apt-get install nginx-light)")
    prefix = _prefix(app_port, listen_port, extra_rules, door, limit)
    user = SYSTEM_USER if os.geteuid() == 0 else None
    process = subprocess.Popen(
        [nginx, "-p", prefix, "-c", "nginx.conf", "-e", "stderr"],
        stdout=log,
        stderr=subprocess.STDOUT,
        user=user,
        start_new_session=True,
    )
    scheme = "https" if door and door.tls else "http"
    handle = Proxy(process, prefix, f"{scheme}://127.0.0.1:{listen_port}")
    try:
        _wait_listening(process, listen_port, timeout)
    except BaseException:
        stop(handle)
        raise
    return handle


@contextlib.contextmanager
def proxied(app_port, listen_port, log=None, door=None, limit=None):
    """start() ... stop() around a with block (app_port: a port or a list);
    yields the handle."""
    handle = start(app_port, listen_port, log, door=door, limit=limit)
    try:
        yield handle
    finally:
        stop(handle)


def stop(handle, timeout=10.0):
    """SIGQUIT: nginx finishes the requests in flight, then exits. SIGKILL if
    it has not within `timeout` seconds. Removes the prefix folder."""
    children.stop(handle.process, signal.SIGQUIT, timeout)  # nginx's graceful shutdown
    shutil.rmtree(handle.prefix, ignore_errors=True)


def _prefix(app_port, listen_port, extra_rules="", door=None, limit=None):
    """A temporary nginx prefix: the rendered config, the rules, temp folders
    (and the door's files, its token's map, its certificate)."""
    prefix = Path(tempfile.mkdtemp(prefix="nginx-"))
    config = CONFIG.read_text()
    config = config.replace("@APP_SERVERS@", upstream_servers(app_port, limit))
    config = config.replace("@LISTEN_PORT@", str(listen_port))
    http, server, tls = "access_log off;", "", ""
    if door:
        http = "include door.conf;\n    include write-token.conf;\n    access_log access.log door;"
        server = "include door.inc;"
        _door_files(prefix, door)
    if door and door.tls:
        tls = " ssl"
        server += "\n        include tls.inc;"
        _certificate(prefix / "tls")
    config = config.replace("@HTTP_LOG@", http).replace("@DOOR_SERVER@", server)
    config = config.replace("@LISTEN_TLS@", tls)
    (prefix / "nginx.conf").write_text(config)
    (prefix / "api.inc").write_text(RULES.read_text() + extra_rules)
    (prefix / "tmp").mkdir()
    if os.geteuid() == 0:
        entry = pwd.getpwnam(SYSTEM_USER)
        for path in (prefix, *prefix.rglob("*")):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    return str(prefix)


def _door_files(prefix, door):
    """The door's rules, and its write token's map (proxy/write-token.sh: the
    one place that writes it, here and in the proxy image). Without a token
    file, writes are open, and said to be so (WRITES_OPEN=1): a benchmark's
    door is on 127.0.0.1, and write-token.sh refuses to start without one."""
    for name in DOOR_FILES:
        text = (ROOT / "proxy" / name).read_text()
        if door.bench:
            text = re.sub(r"rate=\d+r/s", f"rate={BENCH_RATE}", text)
            text = re.sub(r"(limit_conn door_connections) \d+;", rf"\1 {BENCH_CONNECTIONS};", text)
        (prefix / name).write_text(text)
    token_file = door.token_file or prefix / "no-write-token"
    opened = {} if door.token_file else {"WRITES_OPEN": "1"}
    subprocess.run(
        [
            "sh",
            str(ROOT / "proxy" / "write-token.sh"),
            str(token_file),
            str(prefix / "write-token.conf"),
        ],
        env={**os.environ, **opened},
        check=True,
        capture_output=True,
    )


def _certificate(folder):
    """A self-signed certificate for 127.0.0.1 and localhost, for a day."""
    folder.mkdir()
    subprocess.run(
        [*CERTIFICATE.split(), "-keyout", folder / "tls.key", "-out", folder / "tls.crt"],
        check=True,
        capture_output=True,
    )


def max_conns(handle):
    """The limit of each copy in the config a running nginx read (None: none)."""
    found = re.findall(r"max_conns=(\d+);", (Path(handle.prefix) / "nginx.conf").read_text())
    return int(found[0]) if found else None


def upstream_servers(app_ports, limit=None):
    """The `server` lines of the upstream block: one per port (an int: one),
    each given at most `limit` requests at once (None: no limit)."""
    ports = [app_ports] if isinstance(app_ports, int) else list(app_ports)
    most = f" max_conns={limit}" if limit else ""
    return "\n        ".join(f"server 127.0.0.1:{port}{most};" for port in ports)


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
