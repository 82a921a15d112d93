"""PgBouncer (Debian's package) in front of one Postgres URL, on a free port of
127.0.0.1, as a context manager: the benchmark's --pgbouncer (one per app, so
that each app's server-side pool is exactly its budget) and
tests/test_pgbouncer.py. Its configuration is written by
docker/pgbouncer/entrypoint.sh, the image's entrypoint, from the environment:
one generator for compose.yaml, deploy/k8s and here.

    with Bouncer(database_url, log, server_connections=20) as bouncer:
        ...  # clients connect to bouncer.url; Postgres sees at most 20

Clients keep their application_name through it: PgBouncer sets the client's on
the server connection it lends (it tracks application_name as it does
client_encoding), so pg_stat_activity still names each app's connections.
"""

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from urllib.parse import unquote, urlsplit, urlunsplit

import psycopg2

from bench.stack.budget import DEFAULT_CONNECTIONS
from db import embedded
from tools import ROOT, children

ENTRYPOINT = ROOT / "docker" / "pgbouncer" / "entrypoint.sh"
# Debian installs it in /usr/sbin, outside most users' PATH.
SEARCH_PATH = f"{os.environ.get('PATH', '')}{os.pathsep}/usr/sbin"
# Client connections each PgBouncer takes (the apps' pools, all their processes').
CLIENT_LIMIT = 2000
# PgBouncer refuses to run as root: as nobody then (the image runs as postgres).
UNPRIVILEGED = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


class BouncerNotStarted(RuntimeError):
    """PgBouncer exited, or did not let a client through in time; the message
    ends with its log."""


def binary():
    """The pgbouncer executable, or None (apt-get install pgbouncer)."""
    return shutil.which("pgbouncer", path=SEARCH_PATH)


def version():
    """'PgBouncer 1.18.0': the first line of its --version."""
    completed = subprocess.run([binary(), "--version"], capture_output=True, text=True, check=True)
    return completed.stdout.splitlines()[0].strip()


def bounced_url(database_url, port, password):
    """database_url with PgBouncer's address and password: the same user,
    database and parameters (application_name among them)."""
    parts = urlsplit(database_url)
    user = parts.netloc.rpartition("@")[0].partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@127.0.0.1:{port}"))


class Bouncer:
    """PgBouncer in transaction pooling in front of database_url's server,
    holding at most server_connections + reserve connections to it per
    database and user; url: where clients connect (the password is
    database_url's, else a random one that Postgres then must not check)."""

    def __init__(self, database_url, log, server_connections=DEFAULT_CONNECTIONS, reserve=0):
        self.database_url, self.log = database_url, log
        self.server_connections, self.reserve = server_connections, reserve
        self.process = self.url = self.tmp = None

    def environment(self, port, password):
        """entrypoint.sh's settings (read there): the Postgres behind, the pool."""
        database = urlsplit(self.database_url)
        return {
            "PATH": SEARCH_PATH,
            "TMPDIR": self.tmp,  # its configuration (a password in it) goes here
            "DB_HOST": database.hostname or "127.0.0.1",
            "DB_PORT": str(database.port or 5432),
            "DB_USER": unquote(database.username or pwd.getpwuid(os.getuid()).pw_name),
            "DB_PASSWORD": password,
            "POOL_MODE": "transaction",
            "DEFAULT_POOL_SIZE": str(self.server_connections),
            "RESERVE_POOL_SIZE": str(self.reserve),
            "MAX_CLIENT_CONN": str(CLIENT_LIMIT),
            "LISTEN_ADDR": "127.0.0.1",
            "LISTEN_PORT": str(port),
        }

    def __enter__(self):
        password = unquote(urlsplit(self.database_url).password or secrets.token_urlsafe(16))
        port = embedded.free_port()
        self.tmp = tempfile.mkdtemp(prefix="pgbouncer-")
        root = os.geteuid() == 0
        if root:
            os.chown(self.tmp, pwd.getpwnam("nobody").pw_uid, -1)
        command = [*UNPRIVILEGED * root, "sh", str(ENTRYPOINT)]
        self.process = subprocess.Popen(
            command,
            env=self.environment(port, password),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a group of its own, for children.stop()
        )
        self.url = bounced_url(self.database_url, port, password)
        try:
            self.wait_ready()
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_ready(self, timeout=15.0):
        """Until one client gets through to Postgres (the same URL as the apps:
        the server connection it opens keeps their application_name)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise BouncerNotStarted(f"PgBouncer exited:\n{self.log_tail()}")
            try:
                psycopg2.connect(self.url, connect_timeout=2).close()
                return
            except psycopg2.OperationalError as error:
                if time.monotonic() > deadline:
                    raise BouncerNotStarted(f"PgBouncer: {error}\n{self.log_tail()}") from None
                time.sleep(0.2)

    def log_tail(self):
        try:
            with open(self.log.name) as log:
                return "".join(log.readlines()[-10:])
        except (AttributeError, OSError):
            return "(no log)"

    def __exit__(self, *exc):
        """SIGINT: PgBouncer's safe shutdown (the transactions in flight end first)."""
        if self.process:
            children.stop(self.process, graceful=signal.SIGINT)
        shutil.rmtree(self.tmp, ignore_errors=True)
