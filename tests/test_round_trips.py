"""Round trips to Postgres per request, counted by the delay proxy (the
writes it carries from app to server) in front of every app: one for a read,
three for a write (BEGIN, INSERT, COMMIT: docs/contract.md, "Writes"), in all
four apps. psycopg2 would add a BEGIN and a COMMIT to every read, asyncpg's
pool a reset query to every request."""

import http.client
import json
from urllib.parse import urlsplit

import pytest

from bench.stack.delay_proxy import Launched
from db import embedded
from tools.serve import APPS, running

pytestmark = pytest.mark.slow  # apps through the delay proxy

REQUESTS = 20
ROUTES = [
    ("GET", "/films/995/", None, 1),
    ("GET", "/films/?year.gt=2005", None, 1),
    ("GET", "/health", None, 1),
    ("POST", "/reviews/", json.dumps({"film_id": 995, "rating": 4}), 3),
]


@pytest.fixture(scope="module", params=APPS)
def app(request, database_url, tmp_path_factory):
    """(app's port, proxy): the app, one worker, reaches Postgres through its proxy."""
    log_dir = tmp_path_factory.mktemp("logs")
    with open(log_dir / "proxy.log", "w") as log, Launched(database_url, 0.001, log) as proxy:
        port = embedded.free_port()
        with running(request.param, port, proxy.url, log_dir / "app.log", web_workers=1):
            yield port, proxy


@pytest.mark.parametrize(("method", "path", "body", "round_trips"), ROUTES)
def test_round_trips_per_request(app, db, method, path, body, round_trips):
    port, proxy = app
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        send(connection, method, path, body)  # connects, prepares its statement
        before = proxy.counts()["writes"]
        for _ in range(REQUESTS):
            send(connection, method, path, body)
        sent = proxy.counts()["writes"] - before
    finally:
        connection.close()
    assert sent / REQUESTS == pytest.approx(round_trips, abs=0.1), urlsplit(path).path


def send(connection, method, path, body):
    connection.request(method, path, body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status in (200, 201)
