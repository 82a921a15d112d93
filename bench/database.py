"""What the benchmark asks of Postgres: the review count, its reset, the
server's settings, and the nothing-lost check."""

import time
from dataclasses import asdict, dataclass

import psycopg2

from .errors import BenchmarkError

COUNT_REVIEWS = "SELECT count(*) FROM review"
RESET_REVIEWS = "TRUNCATE review RESTART IDENTITY"
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


def scalar(connection, sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def reset_reviews(connection):
    with connection.cursor() as cursor:
        cursor.execute(RESET_REVIEWS)


def settled_review_count(connection, quiet=1.0, timeout=30.0):
    """The review count once it has not moved for `quiet` seconds: requests
    still in flight when wrk stopped are answered (and committed) after it, and
    a server with a listen backlog (wsgiref, one thread) keeps committing the
    requests queued there for a while, with gaps between them."""
    deadline = time.monotonic() + timeout
    count = scalar(connection, COUNT_REVIEWS)
    steady_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(0.1, quiet))
        latest = scalar(connection, COUNT_REVIEWS)
        if latest != count:
            count, steady_since = latest, time.monotonic()
        elif time.monotonic() - steady_since >= quiet:
            break
    return count


def server_settings(connection):
    return {name: scalar(connection, f"SHOW {name}") for name in SETTINGS}


@dataclass(frozen=True)
class Ledger:
    """The POST run's books: 2xx responses wrk counted, rows the table gained."""

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
