"""Fixtures: a real Postgres with the sample data, and each app under its real
production server (its serve.sh), reached over HTTP.

With DATABASE_URL set, the tests use that database (and empty its review
table); without it, a `dvdrental_test` database on the embedded Postgres.

Tests that start a server are marked `slow` (by the fixtures they use, below):
`./test.sh -m "not slow"` is the fast loop; CI runs everything.
"""

import psycopg2
import pytest

from db import embedded
from tools.serve import APPS, AppNotStarted, database, running

SERVER_FIXTURES = {"server", "servers", "app_server"}


def pytest_collection_modifyitems(items):
    for item in items:
        if SERVER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def database_url():
    with database("dvdrental_test") as url:
        yield url


@pytest.fixture
def db(database_url):
    """An autocommit connection to the test database, with an empty review table."""
    connection = psycopg2.connect(database_url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE review RESTART IDENTITY")
    yield connection
    connection.close()


def serve(app, database_url, log_dir, **settings):
    """Start app; yield its Server once /health answers; stop it afterwards."""
    port = embedded.free_port()
    try:
        with running(app, port, database_url, log_dir / f"{app}-{port}.log", **settings) as server:
            yield server
    except AppNotStarted as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session", params=APPS)
def server(request, database_url, tmp_path_factory):
    """Each app under its production server, two worker processes."""
    yield from serve(request.param, database_url, tmp_path_factory.mktemp("logs"), web_workers=2)


@pytest.fixture(scope="session")
def servers(database_url, tmp_path_factory):
    """All apps at once, for tests that compare them."""
    log_dir = tmp_path_factory.mktemp("logs")
    generators = [serve(app, database_url, log_dir, web_workers=1) for app in APPS]
    try:
        yield [next(generator) for generator in generators]
    finally:
        for generator in generators:
            generator.close()
