"""PgBouncer (Debian's package) in front of one Postgres URL, on a free port of
127.0.0.1, as a context manager: the benchmark's --pgbouncer (one per app, so
that each app's server-side pool is exactly its budget) and
tests/harness/test_pgbouncer.py. Its configuration is written by
docker/pgbouncer/entrypoint.sh, the image's entrypoint, from the environment:
one generator for compose.yaml, deploy/k8s and here.

    with Bouncer(database_url, log, server_connections=20) as bouncer:
        ...  # clients connect to bouncer.url; Postgres sees at most 20

Its consoles have users of their own (random passwords, console_url()): the
apps' credentials cannot PAUSE or SHOW anything there. Every password reaches
the entrypoint in a file of mode 600 in its private folder, never in the
environment.

The benchmark's PgBouncer keeps the apps' password in its auth_file (the
entrypoint's DB_USER mode: a Postgres of yours may have no lookup function).
With auth_user, it runs as compose and Kubernetes run it: its own Postgres
role asks Postgres for the client's SCRAM verifier (auth_query,
db/roles.sql's pgbouncer.user_lookup), and it holds no client's password.

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
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg2

from bench.sut.budget import DEFAULT_CONNECTIONS
from db import embedded
from tools import ROOT, children

ENTRYPOINT = ROOT / "docker" / "pgbouncer" / "entrypoint.sh"
# Debian installs it in /usr/sbin, outside most users' PATH.
SEARCH_PATH = f"{os.environ.get('PATH', '')}{os.pathsep}/usr/sbin"
# Client connections each PgBouncer takes (the apps' pools, all their processes').
CLIENT_LIMIT = 2000
# PgBouncer refuses to run as root: as nobody then (the image runs as postgres).
# Passwords the entrypoint reads from files: the apps' user's (or its auth
# user's, AUTH), and the consoles'.
PASSWORDS = ("DB", "ADMIN", "STATS")
CONSOLE_USERS = {"ADMIN": "pgbouncer_admin", "STATS": "pgbouncer_stats"}
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
    database_url's, else a random one that Postgres then must not check), on
    port, or a free one.

    auth_user (a role of db/roles.sql: pgbouncer_auth): auth_query instead
    of the apps' password in PgBouncer's file; database_url must then carry
    the client's password, which Postgres' verifier checks. The auth user's
    own password is a random one: for a Postgres that trusts its loopback
    clients (the embedded one, the tests')."""

    def __init__(
        self,
        database_url,
        log,
        server_connections=DEFAULT_CONNECTIONS,
        reserve=0,
        auth_user=None,
        port=None,
    ):
        self.database_url, self.log = database_url, log
        self.server_connections, self.reserve = server_connections, reserve
        self.auth_user = auth_user
        self.process = self.url = self.tmp = self.client_password = None
        self.port = port
        self.passwords = {}

    @property
    def password_names(self):
        """The entrypoint's *_PASSWORD_FILE variables, less the suffix."""
        return ("AUTH" if self.auth_user else "DB", *PASSWORDS[1:])

    def environment(self, port):
        """entrypoint.sh's settings (read there): the Postgres behind, the pool,
        the password files."""
        database = urlsplit(self.database_url)
        user = unquote(database.username or pwd.getpwuid(os.getuid()).pw_name)
        clients = {"AUTH_USER": self.auth_user} if self.auth_user else {"DB_USER": user}
        return {
            "PATH": SEARCH_PATH,
            "TMPDIR": self.tmp,  # its configuration (a password in it) goes here
            "DB_HOST": database.hostname or "127.0.0.1",
            "DB_PORT": str(database.port or 5432),
            **clients,
            **{
                f"{name}_PASSWORD_FILE": str(self.password_file(name))
                for name in self.password_names
            },
            "ADMIN_USER": CONSOLE_USERS["ADMIN"],
            "STATS_USER": CONSOLE_USERS["STATS"],
            "POOL_MODE": "transaction",
            "DEFAULT_POOL_SIZE": str(self.server_connections),
            "RESERVE_POOL_SIZE": str(self.reserve),
            "MAX_CLIENT_CONN": str(CLIENT_LIMIT),
            "LISTEN_ADDR": "127.0.0.1",
            "LISTEN_PORT": str(port),
        }

    def password_file(self, name):
        return Path(self.tmp) / f"{name.lower()}_password"

    def write_passwords(self, root):
        """The apps' password (database_url's, else a random one that Postgres
        then must not check), or the auth user's, and the consoles' random
        ones, each in a file of mode 600 (the unprivileged user's when run as
        root)."""
        given = urlsplit(self.database_url).password
        if self.auth_user and not given:
            raise ValueError("with auth_user, database_url carries the client's password")
        self.passwords = {name: secrets.token_urlsafe(16) for name in self.password_names}
        if given and not self.auth_user:
            self.passwords["DB"] = unquote(given)
        self.client_password = unquote(given) if self.auth_user else self.passwords["DB"]
        for name, password in self.passwords.items():
            path = self.password_file(name)
            path.touch(mode=0o600)
            path.write_text(password + "\n")
            if root:
                os.chown(path, pwd.getpwnam("nobody").pw_uid, -1)

    def console_url(self, console="STATS"):
        """The URL of PgBouncer's console as its ADMIN or STATS user."""
        user, password = CONSOLE_USERS[console], self.passwords[console]
        return f"postgresql://{user}:{quote(password, safe='')}@127.0.0.1:{self.port}/pgbouncer"

    def __enter__(self):
        self.port = port = self.port or embedded.free_port()
        self.tmp = tempfile.mkdtemp(prefix="pgbouncer-")
        root = os.geteuid() == 0
        if root:
            os.chown(self.tmp, pwd.getpwnam("nobody").pw_uid, -1)
        self.write_passwords(root)
        password = self.client_password
        command = [*UNPRIVILEGED * root, "sh", str(ENTRYPOINT)]
        self.process = subprocess.Popen(
            command,
            env=self.environment(port),
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
