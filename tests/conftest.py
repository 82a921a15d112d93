"""Fixtures: a real Postgres with the sample data, and each app under its real
production server (its serve.sh), reached over HTTP.

With DATABASE_URL set, the tests use that database (and empty its review
table); without it, a `dvdrental_test` database on the embedded Postgres.
"""

import os
from dataclasses import dataclass

import psycopg2
import pytest

from db import embedded
from db.load import load
from tools.serve import APPS, start_app, stop, wait_healthy


@pytest.fixture(scope="session")
def database_url():
    if os.environ.get("DATABASE_URL"):
        url, started = os.environ["DATABASE_URL"], False
    else:
        started = embedded.running_port() is None
        url = embedded.start(database="dvdrental_test")
    load(url)
    yield url
    if started:
        embedded.stop()


@pytest.fixture
def db(database_url):
    """An autocommit connection to the test database, with an empty review table."""
    connection = psycopg2.connect(database_url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE review RESTART IDENTITY")
    yield connection
    connection.close()


def query(connection, sql, *params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@dataclass
class Server:
    app: str
    url: str
    log_path: str

    def log_tail(self, lines=40):
        with open(self.log_path) as log:
            return "".join(log.readlines()[-lines:])


def serve(app, database_url, log_dir, **settings):
    """Start app; yield a Server once /health answers; stop it afterwards."""
    port = embedded.free_port()
    log_path = log_dir / f"{app}-{port}.log"
    with open(log_path, "w") as log:
        process = start_app(app, port, database_url, log=log, **settings)
    server = Server(app, f"http://127.0.0.1:{port}", str(log_path))
    try:
        try:
            wait_healthy(process, server.url)
        except RuntimeError as error:
            pytest.fail(f"{app} did not start: {error}\n{server.log_tail()}")
        yield server
    finally:
        stop(process)


# TEST_SERVERS="name=url ...": the `server` tests run against these, already
# running, instead of starting each app (tests/test_compose_up.py: the stack).
TEST_SERVERS = dict(item.split("=", 1) for item in os.environ.get("TEST_SERVERS", "").split())


@pytest.fixture(scope="session", params=list(TEST_SERVERS) or APPS)
def server(request, database_url, tmp_path_factory):
    """Each app under its production server, two worker processes."""
    if request.param in TEST_SERVERS:
        yield Server(request.param, TEST_SERVERS[request.param], os.devnull)
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
