"""Errors Postgres answers with, by SQLSTATE class, against every app under its
production server on a Postgres of this module's own (conftest's `postgres`).
Each one that means "the database cannot serve this now" is the contract's 503
with the same body in all four apps (common/contract.py: UNAVAILABLE_SQLSTATES),
any other database error the contract's 500, and nothing is written."""

import threading
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest

from common import contract
from tests.faults import get, post, wait_for
from tests.helpers import LOCK_WAITERS, port_of, query, serve
from tools.serve import APPS

pytestmark = pytest.mark.slow  # apps on a Postgres of their own

UNAVAILABLE = {"error": contract.DATABASE_UNAVAILABLE}
REVIEW = b'{"film_id": 995, "rating": 4}'


@pytest.fixture(params=APPS)
def private_server(request, postgres, private_db, tmp_path):
    yield from serve(request.param, postgres.url, tmp_path, web_workers=1)


def answer(response):
    return response.status, response.json(), response.headers["content-type"]


def reviews(connection):
    return query(connection, "SELECT count(*) FROM review")[0][0]


def execute(connection, *statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def test_read_only_database_refuses_writes_with_503(private_server, private_db):
    """default_transaction_read_only, reloaded into every session: what a
    failover to a hot standby gives a write (25006). Reads still answer."""
    port = port_of(private_server)
    assert post(port, REVIEW).status == 201  # pooled connections, opened before the change
    execute(private_db, "ALTER SYSTEM SET default_transaction_read_only = on")
    statuses = []  # until every session has reloaded, a write may still pass

    def refused():
        statuses.append(post(port, REVIEW).status)
        return statuses[-1] != 201

    try:
        execute(private_db, "SELECT pg_reload_conf()")
        assert wait_for(refused, timeout=10)
        assert answer(post(port, REVIEW)) == (503, UNAVAILABLE, "application/json")
        assert get(port, "/films/995/").status == 200
    finally:
        execute(private_db, "ALTER SYSTEM RESET default_transaction_read_only")
        execute(private_db, "SELECT pg_reload_conf()")
    assert reviews(private_db) == 1 + statuses.count(201)


def test_deadlock_victim_is_503_and_writes_nothing(private_server, postgres, private_db):
    """The app's INSERT waits for film 995's row (its foreign key check) held by
    another session, which then waits for the app's lock on review: Postgres
    aborts the app's transaction (40P01), the first to reach deadlock_timeout."""
    deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
    before = query(private_db, deadlocks)
    locker = psycopg2.connect(postgres.url)
    responses = []
    try:
        execute(locker, "SET deadlock_timeout = '30s'")  # the app's session is the victim
        execute(locker, "SELECT 1 FROM film WHERE film_id = 995 FOR UPDATE")
        writer = threading.Thread(
            target=lambda: responses.append(post(port_of(private_server), REVIEW))
        )
        writer.start()
        assert wait_for(lambda: query(private_db, LOCK_WAITERS) == [(1,)], timeout=10)
        execute(locker, "LOCK TABLE review IN SHARE MODE")  # blocks until the app gives up
        writer.join(20)
    finally:
        locker.rollback()
        locker.close()
    assert answer(responses[0]) == (503, UNAVAILABLE, "application/json")
    assert reviews(private_db) == 0
    # A deadlock it was, not the statement timeout (57014, also a 503).
    assert wait_for(lambda: query(private_db, deadlocks) != before, timeout=5)


def with_url(url, **parts):
    return urlunsplit(urlsplit(url)._replace(**parts))


@pytest.fixture(scope="module")
def refused_role(postgres):
    """A role pg_hba.conf refuses (host ... reject), reloaded into the server."""
    admin = psycopg2.connect(postgres.url)
    admin.autocommit = True
    execute(admin, "DROP ROLE IF EXISTS refused", "CREATE ROLE refused LOGIN")
    hba = postgres.data_dir / "pg_hba.conf"
    rules = hba.read_text()
    hba.write_text(f"host all refused 127.0.0.1/32 reject\n{rules}")
    execute(admin, "SELECT pg_reload_conf()")
    yield
    hba.write_text(rules)
    execute(admin, "SELECT pg_reload_conf()", "DROP ROLE refused")
    admin.close()


@pytest.mark.parametrize(
    "url_parts",
    [
        pytest.param(lambda netloc: {"path": "/no_such_database"}, id="no such database"),
        pytest.param(
            lambda netloc: {"netloc": "refused@" + netloc.rpartition("@")[2]},
            id="refused by pg_hba.conf",
        ),
        pytest.param(
            lambda netloc: {"netloc": "no_such_role@" + netloc.rpartition("@")[2]},
            id="no such role",
        ),
    ],
)
@pytest.mark.parametrize("app_name", APPS)
def test_connection_refused_by_postgres_is_503_on_every_route(
    app_name, url_parts, postgres, private_db, refused_role, tmp_path
):
    """Postgres itself refuses the login (3D000, 28000): every route, /health
    included, answers 503, as it does when the server is down."""
    url = with_url(postgres.url, **url_parts(urlsplit(postgres.url).netloc))
    for server in serve(app_name, url, tmp_path, web_workers=1, health=503):
        port = port_of(server)
        for path in ("/health", "/films/995/", "/films/"):
            assert answer(get(port, path)) == (503, UNAVAILABLE, "application/json"), path
        assert answer(post(port, REVIEW)) == (503, UNAVAILABLE, "application/json")
    assert reviews(private_db) == 0


def test_other_database_errors_are_the_contracts_500(private_server, private_db):
    """A schema the app does not expect (the review table renamed by a
    migration gone wrong, 42P01): not the client's fault, nor a passing one."""
    execute(private_db, "ALTER TABLE review RENAME TO review_renamed")
    try:
        response = post(port_of(private_server), REVIEW)
    finally:
        execute(private_db, "ALTER TABLE review_renamed RENAME TO review")
    assert answer(response) == (500, {"error": contract.INTERNAL_ERROR}, "application/json")
    assert get(port_of(private_server), "/films/995/").status == 200
    assert reviews(private_db) == 0
