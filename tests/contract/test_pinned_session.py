"""Each app's session_init (its driver's PoolWrapper in common/), in process
on the test database: on a
new connection it pins READ COMMITTED and the stricter of DATABASE_TIMEOUT and
the server's own statement_timeout (0 there: none), whatever the server's
defaults; behind a transaction pooler it pins nothing (PgBouncer does:
tests/harness/test_pgbouncer.py). The server's defaults are stood in for by the
session's own SET, which PIN_SESSION reads as it reads ALTER DATABASE's and
ALTER ROLE's (tests/reliability/test_database_changes.py sets those, under the servers)."""

import asyncio

import asyncpg
import psycopg2
import pytest

from common import async_pool_wrapper, pool_wrapper
from common.settings import Settings
from db import roles
from infra import apps
from tests.helpers import query
from tools.serve import APPS

SHOW = "SELECT current_setting('statement_timeout'), current_setting('transaction_isolation')"


def settings(database_url, database_timeout, transaction_pooling="0"):
    return Settings.from_env(
        {
            "DATABASE_URL": database_url,
            "DATABASE_TIMEOUT": str(database_timeout),
            "TRANSACTION_POOLING": transaction_pooling,
        }
    )


def session_after_init(app, database_url, server_defaults, app_settings):
    """(statement_timeout, transaction_isolation) of a new connection of the
    app's driver, on which server_defaults ran and then the app's init, if any."""
    driver = apps.get(app).driver
    init = POOLS[driver].session_init(app_settings)
    return DRIVERS[driver](database_url, server_defaults, init)


def psycopg2_session(database_url, server_defaults, init):
    connection = psycopg2.connect(database_url)
    connection.autocommit = True
    try:
        query_none(connection, server_defaults)
        if init is not None:
            init(connection)
        return query(connection, SHOW)[0]
    finally:
        connection.close()


def asyncpg_session(database_url, server_defaults, init):
    return asyncio.run(async_session(database_url, server_defaults, init))


async def async_session(database_url, server_defaults, init):
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute(server_defaults)
        if init is not None:
            await init(connection)
        return tuple(await connection.fetchrow(SHOW))
    finally:
        await connection.close()


# Each app's driver (its app.toml), how to open a connection of it here, and
# the PoolWrapper of common/ that pins its sessions.
DRIVERS = {"psycopg2-binary": psycopg2_session, "asyncpg": asyncpg_session}
POOLS = {"psycopg2-binary": pool_wrapper, "asyncpg": async_pool_wrapper}


def query_none(connection, sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize(
    ("server_timeout", "database_timeout", "pinned"),
    [
        ("0", 5, "5s"),  # the server has none: the app's
        ("60s", 5, "5s"),  # the server's is looser: the app's
        ("1500ms", 5, "1500ms"),  # the operator's is stricter: it stays
        ("1s", 0.25, "250ms"),
    ],
)
def test_session_init_pins_read_committed_and_the_stricter_timeout(
    app, database_url, server_timeout, database_timeout, pinned
):
    server_defaults = (
        f"SET statement_timeout = '{server_timeout}';"
        " SET default_transaction_isolation = 'serializable'"
    )
    url = roles.app_url(database_url)  # the apps' own role (db/roles.sql)
    session = session_after_init(app, url, server_defaults, settings(url, database_timeout))
    assert session == (pinned, "read committed")


@pytest.mark.parametrize("app", APPS)
def test_session_init_pins_nothing_behind_a_transaction_pooler(app, database_url):
    server_defaults = (
        "SET statement_timeout = '60s'; SET default_transaction_isolation = 'serializable'"
    )
    session = session_after_init(
        app, database_url, server_defaults, settings(database_url, 5, transaction_pooling="1")
    )
    assert session == ("1min", "serializable")


@pytest.mark.parametrize("app", APPS)
def test_a_timeout_under_a_millisecond_is_one_not_none(app, database_url):
    """statement_timeout counts milliseconds, and 0 means none: a smaller
    DATABASE_TIMEOUT is pinned as 1 ms, not as no bound at all."""
    pool = POOLS[apps.get(app).driver]
    assert pool.session_init(settings(database_url, 0.0001)).keywords == {"timeout_ms": 1}
