"""The fast tier of GET /films/<film_id>/ratings/: each app in this process,
through its framework's test client (tests/contract/test_apps_in_process.py), its
sources the upstream's service in threads (tests/rating_sources.py), a real
Postgres. tests/contract/test_ratings.py is the proof, under the real servers: this
module catches a broken rule in seconds."""

import time

import pytest

from common import contract
from common.settings import Settings
from infra.ports import free_port
from tests.contract.test_apps_in_process import CLIENTS
from tests.rating_sources import HOSTILE, expected, sources
from tools.serve import APPS

PORTS = [free_port() for _ in range(3)]
SOURCES = [f"http://127.0.0.1:{port}" for port in PORTS]
TIMEOUT = "0.2"  # what a slow source costs each app: the slow cases are the HTTP suite's


@pytest.fixture(scope="module", params=APPS)
def client(request, database_url):
    """Each app, built by its own factory, asking the three sources."""
    environ = {
        "DATABASE_URL": database_url,
        "POOL_MAX_SIZE": "2",
        "UPSTREAM_FANOUT": ",".join(SOURCES),
        "UPSTREAM_TIMEOUT": TIMEOUT,
        # In process the test's own blocking calls share the app's loop: no
        # admission by its lag here (tests/contract/test_admission.py has it).
        "QUEUE_BUDGET": "0",
    }
    client = CLIENTS[request.param](Settings.from_env(environ))
    yield client
    client.close()


@pytest.mark.parametrize(
    "kinds",
    [("up", "up", "up"), ("up", "down", "up"), ("failing", "up", "up")],
    ids=["all-up", "one-refused", "one-answering-500"],
)
def test_each_source_rates_or_is_named(client, db, kinds):
    with sources(PORTS, *kinds):
        response = client.request("GET", "/films/42/ratings/")
    assert (response.status, response.content_type) == (200, "application/json")
    assert response.json == expected(db, 42, PORTS, kinds)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_source_that_steers_or_holds_is_failed(client, db, hostile):
    """A redirect, a body without end or of 10 MB: null, and named, by the
    deadline (a margin of a second: a shared machine's)."""
    kinds = ("up", "up", hostile)
    with sources(PORTS, *kinds):
        started = time.monotonic()
        response = client.request("GET", "/films/42/ratings/")
        took = time.monotonic() - started
    assert response.json == expected(db, 42, PORTS, kinds)
    assert took < float(TIMEOUT) + 1.0


@pytest.mark.parametrize(
    ("kinds", "status", "message"),
    [
        (("down", "failing", "down"), 502, contract.NO_RATING_SOURCE),
        (("slow", "down", "down"), 504, contract.NO_RATING_SOURCE_IN_TIME),
    ],
    ids=["all-refused-or-failing", "one-slow-the-rest-refused"],
)
def test_every_source_failed(client, kinds, status, message):
    with sources(PORTS, *kinds):
        response = client.request("GET", "/films/42/ratings")
    assert (response.status, response.json) == (status, {"error": message})
    assert response.content_type == "application/json"
