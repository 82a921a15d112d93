"""The API contract (api/openapi.yaml, docs/contract.md), checked over HTTP
against every app under its production server and against the database."""

import json
import os
import time

import pytest
import requests

from bench import write_token
from common import contract
from tests.corpus import ERRORS, REVIEW
from tests.helpers import query

# TEST_WRITE_TOKEN_FILE: the write token of the door the TEST_SERVERS stand
# behind (tests/deploy/test_compose_up.py, test_swarm.py), sent as a client
# allowed to write sends it.
WRITE_TOKEN = write_token.headers(os.environ.get("TEST_WRITE_TOKEN_FILE"))
DOOR_TRIES = 5


def call(server, method, path, body=None, headers=None):
    """One request; a list body is sent chunked, one chunk per item. A POST
    carries the door's write token when the servers are behind one. A 429 is
    the door's (no app answers one: the request never reached it): sent again
    after its Retry-After, as a client of the door does."""
    if method == "POST":
        headers = {**WRITE_TOKEN, **(headers or {})}
    for _ in range(DOOR_TRIES):
        data = iter(body) if isinstance(body, list) else body
        response = requests.request(
            method, server.url + path, data=data, headers=headers, timeout=10
        )
        if response.status_code != 429:
            break
        time.sleep(float(response.headers.get("Retry-After", 1)))
    return response


def reviews(db):
    return query(db, "SELECT review_id, film_id, rating FROM review ORDER BY review_id")


def assert_json(response, status, body):
    assert (response.status_code, response.json()) == (status, body)
    assert response.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "path",
    [
        "/films/995/",
        "/films/995",
        "/films/0995/",
        "/films/%39%39%35/",
        "/%66ilms/995/",
        "/films%2F995",
    ],
)
def test_get_film(server, db, path):
    [(title, year)] = query(db, "SELECT title, release_year FROM film WHERE film_id = 995")
    response = call(server, "GET", path)
    assert_json(response, 200, {"film_id": 995, "release_year": year, "title": title})


@pytest.mark.parametrize(
    "query_string, year",
    [
        ("", 2000),
        ("?year.gt=2010", 2010),
        ("?year.gt=-5", -5),
        ("?year.gt=2012", 2012),
        ("?year.gt=2010&year.gt=2001", 2010),
        ("?other=1", 2000),
    ],
)
def test_get_films(server, db, query_string, year):
    rows = query(db, "SELECT film_id, release_year, title FROM film WHERE release_year > %s", year)
    expected = {str(film_id): {"release_year": y, "title": t} for film_id, y, t in rows}
    for path in ("/films/", "/films"):
        assert_json(call(server, "GET", path + query_string), 200, expected)
    if year == 2000:
        assert len(expected) == 1000  # the article's GET /films/ returned every film


def test_health(server):
    for path in ("/health", "/health/"):
        assert_json(call(server, "GET", path), 200, {"status": "ok"})


@pytest.mark.parametrize("path", ["/reviews/", "/reviews"])
def test_post_review(server, db, path):
    response = call(server, "POST", path, json.dumps(REVIEW), {"Content-Type": "application/json"})
    [(review_id, film_id, rating)] = reviews(db)
    assert_json(response, 201, {"review_id": review_id, **REVIEW})
    assert (film_id, rating) == (995, 4)


@pytest.mark.parametrize(
    "body, headers",
    [
        pytest.param(json.dumps(REVIEW), {"Content-Type": "text/plain"}, id="any-content-type"),
        pytest.param(json.dumps({**REVIEW, "extra": [1]}), {}, id="extra-member"),
        pytest.param(json.dumps({"film_id": 1, "rating": 5}), {}, id="edges"),
        pytest.param(
            [b'{"film_id": 995,', b' "rating": 4}'],
            {"Content-Type": "application/json"},
            id="chunked",
        ),
        pytest.param(
            json.dumps({**REVIEW, "pad": ""}).ljust(contract.MAX_BODY_BYTES).encode(),
            {},
            id="exactly-the-limit",
        ),
    ],
)
def test_post_review_accepts(server, db, body, headers):
    response = call(server, "POST", "/reviews/", body, headers)
    assert response.status_code == 201, response.text
    assert len(reviews(db)) == 1


@pytest.mark.parametrize(
    "method, path, body, status, message",
    ERRORS,
    ids=[f"{m} {p} {b[:24]!r} {s}" if b else f"{m} {p} {s}" for m, p, b, s, _ in ERRORS],
)
def test_errors(server, db, method, path, body, status, message):
    response = call(server, method, path, body)
    assert_json(response, status, {"error": message})
    if status == 405:
        allowed = {"/reviews": {"POST"}, "/health": {"GET", "HEAD"}}.get(
            path.rstrip("/"), {"GET", "HEAD"}
        )
        assert set(response.headers["Allow"].replace(" ", "").split(",")) == allowed
    assert reviews(db) == []


def test_chunked_body_too_large(server, db):
    chunks = [b'{"film_id": 995, "rating": 4, "pad": "', b"x" * 2 * contract.MAX_BODY_BYTES, b'"}']
    response = call(server, "POST", "/reviews/", chunks)
    assert_json(response, 413, {"error": contract.BODY_TOO_LARGE})
    assert reviews(db) == []


@pytest.mark.parametrize(
    "path, status",
    [("/films/995/", 200), ("/films/", 200), ("/health", 200), ("/films/0/", 404), ("/nope", 404)],
)
def test_head_is_get_without_body(server, path, status):
    get, head = call(server, "GET", path), call(server, "HEAD", path)
    assert (head.status_code, head.content) == (status, b"")
    assert head.headers["Content-Type"] == get.headers["Content-Type"] == "application/json"
