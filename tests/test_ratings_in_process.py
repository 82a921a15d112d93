"""The fast tier of GET /films/<film_id>/ratings/: each app in this process,
through its framework's test client (tests/test_apps_in_process.py), its
sources the upstream's service in threads (tests/rating_sources.py), a real
Postgres. tests/test_ratings.py is the proof, under the real servers: this
module catches a broken rule in seconds."""

import pytest

from common import contract
from common.settings import Settings
from infra.ports import free_port
from tests.helpers import query
from tests.rating_sources import sources
from tests.test_apps_in_process import CLIENTS
from tools.serve import APPS
from upstream.server import rating

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
    }
    client = CLIENTS[request.param](Settings.from_env(environ))
    yield client
    client.close()


def film(db, film_id):
    [row] = query(
        db,
        """SELECT f.title, f.release_year, count(r.review_id), round(avg(r.rating), 2)::float8
             FROM film f LEFT JOIN review r USING (film_id)
            WHERE f.film_id = %s GROUP BY f.film_id""",
        film_id,
    )
    title, year, count, average = row
    return {
        "film_id": film_id,
        "release_year": year,
        "title": title,
        "reviews": {"count": count, "average": average},
    }


@pytest.mark.parametrize(
    "kinds",
    [("up", "up", "up"), ("up", "down", "up"), ("failing", "up", "up")],
    ids=["all-up", "one-refused", "one-answering-500"],
)
def test_each_source_rates_or_is_named(client, db, kinds):
    with sources(PORTS, *kinds):
        response = client.request("GET", "/films/42/ratings/")
    ratings = {
        url: rating(42, port) if kind == "up" else None
        for url, port, kind in zip(SOURCES, PORTS, kinds, strict=True)
    }
    unavailable = [url for url, value in ratings.items() if value is None]
    assert (response.status, response.content_type) == (200, "application/json")
    assert response.json == {**film(db, 42), "ratings": ratings, "unavailable": unavailable}


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
