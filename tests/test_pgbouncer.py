"""The apps behind PgBouncer in transaction mode, as compose.yaml and
deploy/k8s run them: docker/pgbouncer/entrypoint.sh (the image's entrypoint)
runs here through the benchmark's launcher (bench/stack/pgbouncer.py), on
Debian's pgbouncer (./test.sh installs it), in front of the test
database; each app under its production server reaches Postgres through it,
with TRANSACTION_POOLING=1. Under concurrent reads and writes every answer is
right and every 201 a row; Postgres sees PgBouncer's pool, not the apps'.
"""

import contextlib
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
import requests

from bench.stack.pgbouncer import Bouncer
from db.load import load
from tests.helpers import needs_pgbouncer, query, serve
from tests.test_faults import query_none
from tools.serve import APPS

pytestmark = pytest.mark.slow  # starts every app under its server

POOL, RESERVE = 4, 1  # PgBouncer's server connections: fewer than the clients
CLIENTS, REQUESTS = 8, 40  # threads, and requests each


@pytest.fixture(scope="module")
def bounced_url(database_url):
    """A database of this module's own on the test server, with the sample
    data: only PgBouncer connects to it, so pg_stat_activity counts its pool."""
    admin = psycopg2.connect(database_url)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("DROP DATABASE IF EXISTS dvdrental_pgbouncer")
        cursor.execute("CREATE DATABASE dvdrental_pgbouncer")
    url = urlunsplit(urlsplit(database_url)._replace(path="/dvdrental_pgbouncer"))
    load(url)
    try:
        yield url
    finally:
        with admin.cursor() as cursor:
            cursor.execute("DROP DATABASE IF EXISTS dvdrental_pgbouncer WITH (FORCE)")
        admin.close()


@pytest.fixture
def bounced_db(bounced_url):
    connection = psycopg2.connect(bounced_url)
    connection.autocommit = True
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def pgbouncer(bounced_url, tmp_path_factory):
    """PgBouncer on a free port of 127.0.0.1 in front of bounced_url's database
    (bench/stack/pgbouncer.py, the benchmark's launcher); yields the apps'
    DATABASE_URL."""
    needs_pgbouncer()
    log_path = tmp_path_factory.mktemp("pgbouncer") / "pgbouncer.log"
    with open(log_path, "w") as log, Bouncer(bounced_url, log, POOL, RESERVE) as bouncer:
        yield bouncer.url


def test_the_statement_timeout_is_pgbouncers(pgbouncer):
    """A client's own startup setting (psycopg2's options) cannot pass
    PgBouncer: its connect_query sets the bound (entrypoint.sh's default) on
    every server connection."""
    connection = psycopg2.connect(pgbouncer, options="-c statement_timeout=1000")
    try:
        assert query(connection, "SHOW statement_timeout") == [("5s",)]
    finally:
        connection.close()


def test_pgbouncer_pins_what_the_apps_pin_behind_it(bounced_url, bounced_db, tmp_path):
    """The apps set no session behind a pooler (session_init); PgBouncer's
    connect_query does, on each server connection, what theirs would: READ
    COMMITTED whatever the database's default, and the operator's
    statement_timeout where it is stricter than STATEMENT_TIMEOUT_MS."""
    database = urlsplit(bounced_url).path.lstrip("/")
    defaults = [
        f"ALTER DATABASE {database} SET default_transaction_isolation = 'serializable'",
        f"ALTER DATABASE {database} SET statement_timeout = '1500ms'",
    ]
    for statement in defaults:
        query_none(bounced_db, statement)
    try:
        with open(tmp_path / "pgbouncer.log", "w") as log, Bouncer(bounced_url, log, 1) as bouncer:
            connection = psycopg2.connect(bouncer.url)
            try:
                isolation = query(connection, "SHOW default_transaction_isolation")
                timeout = query(connection, "SHOW statement_timeout")
            finally:
                connection.close()
    finally:
        query_none(bounced_db, f"ALTER DATABASE {database} RESET ALL")
    assert (isolation, timeout) == ([("read committed",)], [("1500ms",)])


def hammer(url, film_id, outcomes):
    """REQUESTS requests, reads and writes in turn; each status (or error)."""
    session = requests.Session()
    for i in range(REQUESTS):
        try:
            if i % 2:
                response = session.post(
                    f"{url}/reviews/", json={"film_id": film_id, "rating": 5}, timeout=30
                )
            else:
                response = session.get(f"{url}/films/{film_id}/", timeout=30)
            outcomes.append((response.status_code, response.text[:200]))
        except requests.RequestException as error:
            outcomes.append((type(error).__name__, str(error)[:200]))


def backends(connection, database):
    [[count]] = query(
        connection,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
        database,
    )
    return count


@pytest.mark.parametrize("app", APPS)
def test_app_behind_pgbouncer_answers_everything_and_loses_nothing(
    app, pgbouncer, bounced_db, tmp_path
):
    """2 workers x a pool of 10 = 20 client connections, over PgBouncer's
    POOL + RESERVE server connections: every read 200, every write 201 and a
    row, and Postgres never sees more than PgBouncer's pool."""
    film_id = 991 + APPS.index(app)
    database = urlsplit(pgbouncer).path.lstrip("/")
    settings = {"web_workers": 2, "pool_max_size": 10, "transaction_pooling": 1}
    outcomes, seen = [], []
    # serve() is a generator: closing it stops the server.
    with contextlib.closing(serve(app, pgbouncer, tmp_path, **settings)) as servers:
        server = next(servers)
        threads = [
            threading.Thread(target=hammer, args=(server.url, film_id, outcomes))
            for _ in range(CLIENTS)
        ]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            seen.append(backends(bounced_db, database))
            time.sleep(0.1)
        for thread in threads:
            thread.join()
    statuses = [status for status, _ in outcomes]
    wrong = [o for o in outcomes if o[0] not in (200, 201)]
    assert not wrong, wrong[:5]
    assert statuses.count(201) == CLIENTS * REQUESTS // 2
    [[rows]] = query(bounced_db, "SELECT count(*) FROM review WHERE film_id = %s", film_id)
    assert rows == statuses.count(201)
    assert max(seen) <= POOL + RESERVE, seen
