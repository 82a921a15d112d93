"""What the benchmark asks of Postgres: a connection, the server's settings,
the connections each app holds, and the nothing-lost check. What it writes,
and removes, is the run's film (bench/sut/run_film.py)."""

import threading
from dataclasses import asdict, dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg2

from bench.errors import BenchmarkError
from infra import procfs

# Stated in every report: they decide what a committed write costs.
SETTINGS = [
    "server_version",
    "max_connections",
    "shared_buffers",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_level",
]


class DatabaseError(BenchmarkError):
    """The database is unreachable."""


SPARE_CONNECTIONS = 10  # for the benchmark's own connection, psql, a curious human


class LostWrites(BenchmarkError):
    """The rows added to review do not match the 2xx responses wrk counted."""


def connect(database_url):
    """An autocommit connection; DatabaseError if the database does not answer."""
    try:
        connection = psycopg2.connect(database_url, connect_timeout=5)
    except psycopg2.OperationalError as error:
        raise DatabaseError(f"database unreachable: {str(error).strip()}") from error
    connection.autocommit = True
    return connection


def scalar(connection, sql, *params):
    """The one value sql returns."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params or None)
        return cursor.fetchone()[0]


def named(database_url, name):
    """database_url with application_name=name: Postgres then tells one app's
    connections from another's (pg_stat_activity), and both drivers read it."""
    parts = urlsplit(database_url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "application_name"]
    query = urlencode([*query, ("application_name", name)], quote_via=quote)  # libpq: no "+"
    return urlunsplit(parts._replace(query=query))


LOCAL = {"", "localhost", "127.0.0.1", "::1"}  # libpq's host: "" or a folder for a socket


def postmaster(connection):
    """The pid of the Postgres server connection talks to, when it runs on
    this machine: the parent of the connection's backend (a process whose
    command line starts "postgres"); None for a server elsewhere (a backend
    pid means nothing here then) or one whose processes cannot be read."""
    host = connection.info.host or ""
    if host not in LOCAL and not host.startswith("/"):
        return None
    backend = procfs.stat(scalar(connection, "SELECT pg_backend_pid()"))
    words = backend and procfs.cmdline(backend.pid)
    if not words or not words[0].startswith("postgres"):
        return None
    return backend.parent


# Postgres keeps the first 63 bytes of an application_name.
HELD = "SELECT count(*) FROM pg_stat_activity WHERE application_name = left(%s, 63)"


class ConnectionsHeld:
    """While the block runs, the most connections the application `name` held,
    read from pg_stat_activity every `every` seconds on a connection of its own
    (most: None without a database)."""

    def __init__(self, database_url, name, every=0.25):
        self.url, self.name, self.every = database_url, name, every
        self.most = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)

    def watch(self):
        connection = connect(self.url)
        try:
            while True:
                self.most = max(self.most or 0, count_held(connection, self.name))
                if self.done.wait(self.every):
                    return
        finally:
            connection.close()

    def __enter__(self):
        if self.url:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        if self.url:
            self.thread.join(10)


def count_held(connection, name):
    with connection.cursor() as cursor:
        cursor.execute(HELD, (name,))
        return cursor.fetchone()[0]


def free_connections(connection):
    """The connections Postgres still accepts from ordinary users: its
    max_connections, less those reserved for superusers and those open."""
    return scalar(
        connection,
        "SELECT current_setting('max_connections')::int"
        " - current_setting('superuser_reserved_connections')::int"
        " - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
    )


def server_settings(connection):
    return {name: scalar(connection, f"SHOW {name}") for name in SETTINGS}


@dataclass(frozen=True)
class Ledger:
    """The POST run's books: 2xx responses the load generator counted, reviews
    the run's film gained."""

    responses_2xx: int
    rows_added: int
    connections: int

    @property
    def in_flight(self):
        """Rows whose response wrk never read: it stops with up to one request
        per connection still in flight, and the server commits those."""
        return self.rows_added - self.responses_2xx

    @property
    def ok(self):
        return 0 <= self.in_flight <= self.connections

    def as_dict(self):
        return {**asdict(self), "in_flight": self.in_flight, "ok": self.ok}


def check_nothing_lost(responses_2xx, rows_added, connections):
    """The Ledger of one POST run. Raises LostWrites if a 2xx response has no
    row (a write lost), or if more rows appeared than wrk's requests in flight
    could explain (a write nobody asked for)."""
    ledger = Ledger(responses_2xx, rows_added, connections)
    if ledger.in_flight < 0:
        raise LostWrites(
            f"{responses_2xx} responses said 201 but only {rows_added} rows were added"
        )
    if ledger.in_flight > connections:
        raise LostWrites(
            f"{rows_added} rows were added for {responses_2xx} 2xx responses: more than "
            f"the {connections} requests that can be in flight when wrk stops"
        )
    return ledger
