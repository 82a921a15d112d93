"""Fixtures: a real Postgres with the sample data, and each app under its real
production server (its serve.sh), reached over HTTP.

The tests empty the review table of the database they use, so they never use
DATABASE_URL: their database is `dvdrental_test` (or TEST_DATABASE_NAME) on
the embedded Postgres, or the one TEST_DATABASE_URL names, a database given
over to them.
With TEST_PROXY=1, every app is reached through nginx (tools/proxy.py).

Tests that start a server or run a program for seconds are marked `slow`
(pyproject.toml says which): those that start the apps by the fixtures they
use, below, the others where they are written. `./test.sh -m "not slow"` is
the fast loop, in-process against the shared database; CI runs everything.
"""

import os
import shutil
import tempfile
from pathlib import Path

import psycopg2
import pytest

from db.load import load
from tests.faults import Postgres
from tests.helpers import serve
from tools.serve import APPS, Server, database

SERVER_FIXTURES = {"server", "servers", "app_server", "flask_process"}
# The tests ./test.sh runs in a pytest beside the others (pyproject.toml's
# `beside`): the Docker tests, then these folders'.
BESIDE = {"reliability"}


def pytest_collection_modifyitems(items):
    for item in items:
        if SERVER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("docker") or BESIDE & set(item.path.parent.parts):
            item.add_marker(pytest.mark.beside)


@pytest.fixture(scope="session")
def database_url():
    """The tests' own database (see above), never DATABASE_URL's; on the
    embedded Postgres, TEST_DATABASE_NAME's if set: each of the pytests
    ./test.sh runs side by side empties its own review table."""
    name = os.environ.get("TEST_DATABASE_NAME", "dvdrental_test")
    with database(name, os.environ.get("TEST_DATABASE_URL")) as url:
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


@pytest.fixture(scope="module")
def postgres():
    """A Postgres of the test module's own, with the sample data, for the fault
    tests: stopped, frozen or reconfigured at will, without touching the shared
    test database. Not in pytest's tmp_path: pytest keeps its root private
    (0700), and the server runs as another user when the tests run as root."""
    data_dir = Path(tempfile.mkdtemp(prefix="pgfaults-"))
    server = Postgres(data_dir)
    try:
        server.url = server.start()
        load(server.url)
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def private_db(postgres):
    """An autocommit connection to `postgres`, with an empty review table."""
    postgres.start()  # a test that failed midway may have left it stopped
    connection = psycopg2.connect(postgres.url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE review RESTART IDENTITY")
    yield connection
    connection.close()


# TEST_SERVERS="name=url ...": the `server` tests run against these, already
# running, instead of starting each app (tests/deploy/test_compose_up.py: the stack).
TEST_SERVERS = dict(item.split("=", 1) for item in os.environ.get("TEST_SERVERS", "").split())


@pytest.fixture(scope="session", params=list(TEST_SERVERS) or APPS)
def server(request, database_url, tmp_path_factory):
    """Each app under its production server, two worker processes."""
    if request.param in TEST_SERVERS:
        yield Server(request.param, TEST_SERVERS[request.param], log_path=None, process=None)
        return
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
