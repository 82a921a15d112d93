"""The apps behind PgBouncer in transaction mode, as compose.yaml and
deploy/k8s run them: docker/pgbouncer/entrypoint.sh (the image's entrypoint)
runs here through the benchmark's launcher (bench/sut/pgbouncer.py), on
Debian's pgbouncer (./test.sh installs it), in front of the test
database, authenticating as compose does: its own role (pgbouncer_auth)
looks up the client's verifier (auth_query), and it holds no password of the
apps'. Each app under its production server logs in through it with its
password, with TRANSACTION_POOLING=1. Under concurrent reads and writes every
answer is right and every 201 a row; Postgres sees PgBouncer's pool, not the
apps'.
"""

import contextlib
import secrets
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg2
import pytest
import requests

from bench.sut.pgbouncer import Bouncer
from db import roles
from db.load import load
from db.roles import app_url
from tests.helpers import needs_pgbouncer, query, serve
from tests.reliability.test_faults import query_none
from tools.serve import APPS

pytestmark = pytest.mark.slow  # starts every app under its server

# A client that is not a console's user, at the console's database: refused at
# login. With auth_query PgBouncer knows no password of the apps', so theirs
# fails authentication there; a user of its file is "not allowed".
REFUSED_AT_THE_CONSOLE = "SASL authentication failed|not allowed"
POOL, RESERVE = 4, 1  # PgBouncer's server connections: fewer than the clients
LOOKUP = 1  # and its auth user's, for auth_query (docker/pgbouncer/entrypoint.sh)
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
def app_password(bounced_url):
    """films_app's password, set for the module's time: PgBouncer checks it
    against the verifier Postgres keeps. The test server trusts its loopback
    clients, so nothing else depends on it; it is removed after."""
    if not roles.trusted(bounced_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres: its roles are its own")
    password = secrets.token_urlsafe(16)
    admin = psycopg2.connect(bounced_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"ALTER ROLE {roles.APP} PASSWORD %s", (password,))
        yield password
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"ALTER ROLE {roles.APP} PASSWORD NULL")
        admin.close()


def with_password(url, password):
    parts = urlsplit(url)
    user, host = parts.netloc.rpartition("@")[::2]
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


@pytest.fixture(scope="module")
def bouncer(bounced_url, app_password, tmp_path_factory):
    """PgBouncer on a free port of 127.0.0.1 in front of bounced_url's database
    (bench/sut/pgbouncer.py, the benchmark's launcher), as compose runs it:
    its auth user pgbouncer_auth, the apps' user films_app its client, with
    films_app's password (db/roles.py)."""
    needs_pgbouncer()
    log_path = tmp_path_factory.mktemp("pgbouncer") / "pgbouncer.log"
    client = with_password(app_url(bounced_url), app_password)
    with (
        open(log_path, "w") as log,
        Bouncer(client, log, POOL, RESERVE, auth_user=roles.PGBOUNCER) as bouncer,
    ):
        yield bouncer


@pytest.fixture(scope="module")
def pgbouncer(bouncer):
    """The apps' DATABASE_URL through PgBouncer."""
    return bouncer.url


def console(url):
    connection = psycopg2.connect(url)
    connection.autocommit = True  # the console takes no transaction
    return connection


@pytest.mark.parametrize("command", ["SHOW POOLS", "SHOW CLIENTS", "PAUSE", "SHUTDOWN"])
def test_the_apps_credentials_cannot_reach_the_console(pgbouncer, bouncer, command):
    """The apps' user and password, at PgBouncer's console database: refused
    at login, so no PAUSE, KILL or SHUTDOWN; the pooler still serves after."""
    apps_console = urlunsplit(urlsplit(pgbouncer)._replace(path="/pgbouncer"))
    with pytest.raises(psycopg2.OperationalError, match=REFUSED_AT_THE_CONSOLE):
        console(apps_console).cursor().execute(command)
    connection = psycopg2.connect(pgbouncer)
    try:
        assert query(connection, "SELECT 1") == [(1,)]
    finally:
        connection.close()


def test_pgbouncer_holds_no_password_of_the_apps(bouncer, app_password):
    """auth_query: its file names its auth user and its consoles' users, and
    no file of its configuration holds films_app's password."""
    folder = Path(bouncer.tmp)
    [userlist] = folder.rglob("userlist.txt")
    users = [line.split('"')[1] for line in userlist.read_text().splitlines()]
    assert users == [roles.PGBOUNCER, "pgbouncer_admin", "pgbouncer_stats"]
    for path in folder.rglob("*"):
        if path.is_file():
            assert app_password not in path.read_text(), path
    [ini] = folder.rglob("pgbouncer.ini")
    assert f" auth_user={roles.PGBOUNCER} " in ini.read_text()


def test_the_apps_password_is_checked_against_postgres_verifier(pgbouncer):
    """films_app logs in through PgBouncer with its password, and is refused
    with another: PgBouncer checks it against the verifier it looked up."""
    connection = psycopg2.connect(pgbouncer)
    try:
        assert query(connection, "SELECT current_user") == [(roles.APP,)]
    finally:
        connection.close()
    with pytest.raises(psycopg2.OperationalError, match="SASL authentication failed"):
        psycopg2.connect(with_password(pgbouncer, "not-the-password")).close()


def test_no_other_role_logs_in_through_pgbouncer(bouncer, bounced_url):
    """The lookup answers for films_app alone: the superuser and the bench's
    role, whatever their password, are unknown to PgBouncer."""
    for role in ("postgres", roles.BENCH):
        url = with_password(roles.login_url(bouncer.url, role), "any-password")
        with pytest.raises(psycopg2.OperationalError, match="no such user"):
            psycopg2.connect(url).close()


def test_the_stats_user_reads_and_cannot_pause(bouncer):
    connection = console(bouncer.console_url("STATS"))
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW POOLS")
            assert cursor.fetchall()
            with pytest.raises(psycopg2.Error, match="admin"):
                cursor.execute("PAUSE")
    finally:
        connection.close()


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
    row, and Postgres never sees more than PgBouncer's pool and its lookup's."""
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
    assert max(seen) <= POOL + RESERVE + LOOKUP, seen


def test_pgbouncers_auth_user_is_no_clients_login(bouncer):
    """pgbouncer_auth's password is in PgBouncer's file for its own login to
    Postgres, where it runs the lookup: as a client of PgBouncer's, with that
    very password, it is refused (docker/pgbouncer/entrypoint.sh's hba.conf),
    so no one reads a verifier through it."""
    url = with_password(roles.login_url(bouncer.url, roles.PGBOUNCER), bouncer.passwords["AUTH"])
    with pytest.raises(psycopg2.OperationalError) as refused:
        psycopg2.connect(url).close()
    assert "reject" in str(refused.value) or "hba" in str(refused.value)
