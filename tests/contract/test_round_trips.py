"""Round trips to Postgres per request, counted by the delay proxy (the
writes it carries from app to server) in front of every app: one for a read
(the ratings route's too: its film and its reviews' count and average are one
statement, and with no rating source configured it asks nothing else), one
for a new review, with an Idempotency-Key or without (a single INSERT in
autocommit: docs/contract.md, "Writes"), two for a replay of a stored key (the
INSERT finds the key taken, a SELECT reads the review), in all four apps.
psycopg2 would add a BEGIN and a COMMIT to every statement, asyncpg's pool a
reset query to every request, and a transaction block around the write a BEGIN
and a COMMIT."""

import http.client
import itertools
import json
from urllib.parse import urlsplit

import pytest

from bench.sut.delay_proxy import Launched
from db import embedded
from tools.serve import APPS, running

pytestmark = pytest.mark.slow  # apps through the delay proxy

REQUESTS = 20
REVIEW = json.dumps({"film_id": 995, "rating": 4})
KEYS = (f"round-trip-{n}" for n in itertools.count())


def new_key():
    return next(KEYS)


def replayed_key():
    return "round-trip-replay"  # stored by the first request, replayed after


ROUTES = [
    ("GET", "/films/995/", None, None, 1),
    ("GET", "/films/?year.gt=2005", None, None, 1),
    ("GET", "/health", None, None, 1),
    ("GET", "/films/995/ratings/", None, None, 1),
    ("POST", "/reviews/", REVIEW, None, 1),
    ("POST", "/reviews/", REVIEW, new_key, 1),
    ("POST", "/reviews/", REVIEW, replayed_key, 2),
]
IDS = ["film", "films", "health", "ratings", "review", "keyed review", "replay"]


@pytest.fixture(scope="module", params=APPS)
def behind_a_proxy(request, database_url, tmp_path_factory):
    """(app's port, proxy): the app, one worker, reaches Postgres through its proxy."""
    log_dir = tmp_path_factory.mktemp("logs")
    with open(log_dir / "proxy.log", "w") as log, Launched(database_url, 0.001, log) as proxy:
        port = embedded.free_port()
        with running(request.param, port, proxy.url, log_dir / "app.log", web_workers=1):
            yield port, proxy


@pytest.mark.parametrize(("method", "path", "body", "key", "round_trips"), ROUTES, ids=IDS)
def test_round_trips_per_request(behind_a_proxy, db, method, path, body, key, round_trips):
    port, proxy = behind_a_proxy
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        for _ in range(2):  # connects, prepares its statements (a replay's, the second)
            send(connection, method, path, body, key)
        before = proxy.counts()["writes"]
        for _ in range(REQUESTS):
            send(connection, method, path, body, key)
        sent = proxy.counts()["writes"] - before
    finally:
        connection.close()
    assert sent / REQUESTS == pytest.approx(round_trips, abs=0.1), urlsplit(path).path


def send(connection, method, path, body, key):
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key()
    connection.request(method, path, body, headers)
    response = connection.getresponse()
    response.read()
    assert response.status in (200, 201)
