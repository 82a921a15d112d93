"""GET /health answers 503 while the database refuses connections, and the app
recovers by itself once it accepts them again."""

import time
from urllib.parse import urlsplit

import psycopg2
import pytest
import requests

from common.contract import DATABASE_UNAVAILABLE


@pytest.fixture
def admin(database_url):
    """An autocommit connection to the server's postgres database."""
    connection = psycopg2.connect(urlsplit(database_url)._replace(path="/postgres").geturl())
    connection.autocommit = True
    yield connection
    connection.close()


def set_connections_allowed(admin, database, allowed):
    with admin.cursor() as cursor:
        cursor.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS {allowed}')
        if not allowed:
            cursor.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = %s",
                (database,),
            )


def health_statuses(server, count):
    return [requests.get(server.url + "/health", timeout=30) for _ in range(count)]


def test_health_is_503_while_the_database_is_unreachable(server, admin, database_url):
    database = urlsplit(database_url).path.lstrip("/")
    set_connections_allowed(admin, database, False)
    try:
        # Enough requests to meet every worker's pool, each with dead connections.
        for response in health_statuses(server, 8):
            assert response.status_code == 503, server.log_tail()
            assert response.json() == {"error": DATABASE_UNAVAILABLE}
            assert response.headers["Content-Type"] == "application/json"
    finally:
        set_connections_allowed(admin, database, True)
    deadline = time.monotonic() + 10
    while requests.get(server.url + "/health", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, "the app did not recover"
        time.sleep(0.1)
    assert all(response.status_code == 200 for response in health_statuses(server, 8))
