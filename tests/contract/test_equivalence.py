"""One corpus of requests, valid and invalid, hand-written and generated, sent
to every app: any difference in status, JSON, content type, Allow header or
what was written to the database fails."""

import json
import random

import pytest
import requests

from tests.corpus import ERRORS, TOO_LARGE
from tests.helpers import query

SEED = 2024
GENERATED = 250

HAND_WRITTEN = [
    ("GET", "/films/995/", None),
    ("GET", "/films/995", None),
    ("GET", "/films/", None),
    ("GET", "/films/?year.gt=2010", None),
    ("GET", "/health", None),
    ("HEAD", "/films/995/", None),
    ("HEAD", "/nope", None),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": 4}'),
    ("POST", "/reviews", b'{"film_id": 1, "rating": 1, "comment": "x"}'),
    *[(method, path, body) for method, path, body, _, _ in ERRORS],
]

SEGMENTS = [
    "films",
    "reviews",
    "health",
    "995",
    "1",
    "0",
    "-1",
    "abc",
    "1.5",
    "%20",
    "%C3%A9",
    "2147483648",
    "99999999999999999999",
    "",
    "FILMS",
    "films%2F995",
    ".",
    "..",
]
METHODS = [
    "GET",
    "GET",
    "GET",
    "POST",
    "POST",
    "HEAD",
    "PUT",
    "DELETE",
    "PATCH",
    "OPTIONS",
    "TRACE",
]
QUERIES = [
    "",
    "?year.gt=2005",
    "?year.gt=",
    "?year.gt=x",
    "?year.gt=-1",
    "?year.gt=1e3",
    "?year.gt=2005&year.gt=x",
    "?YEAR.GT=1",
    "?year.gt=%00",
    "?a=b",
    "?year.gt=0x10",
]
VALUES = [
    995,
    1,
    0,
    -1,
    1000,
    1001,
    5,
    6,
    4.0,
    4.5,
    True,
    False,
    None,
    "4",
    "",
    [],
    {},
    2**31,
    2**63,
    10**30,
    "995",
]


def generated_body(rng):
    choice = rng.random()
    if choice < 0.6:
        review = {key: rng.choice(VALUES) for key in ("film_id", "rating") if rng.random() < 0.85}
        if rng.random() < 0.2:
            review["extra"] = rng.choice(VALUES)
        return json.dumps(review).encode()
    if choice < 0.8:
        return json.dumps(rng.choice(VALUES)).encode()
    return rng.choice(
        [
            b"",
            b"{",
            b'{"film_id": 995, "rating": 4',
            b"\xff\xfe",
            b"NaN",
            '{"film_id": 995, "rating": 4}'.encode("utf-16"),
            b"\x00",
            TOO_LARGE,
        ]
    )


def generated_requests(count, seed=SEED):
    rng = random.Random(seed)
    for _ in range(count):
        path = "/" + "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 3)))
        path += rng.choice(["", "/"]) + rng.choice(QUERIES)
        method = rng.choice(METHODS)
        body = generated_body(rng) if method in ("POST", "PUT", "PATCH") else None
        yield method, path, body


CORPUS = HAND_WRITTEN + list(generated_requests(GENERATED))


def answer(server, db, method, path, body):
    """What a client and the database see of one request, comparable across apps."""
    before = query(db, "SELECT count(*) FROM review")[0][0]
    response = requests.request(method, server.url + path, data=body, timeout=10)
    written = query(db, "SELECT count(*) FROM review")[0][0] - before
    try:
        content = response.json()
    except ValueError:
        content = response.content
    if response.status_code == 201:
        content.pop("review_id")  # each app's own sequence value
    allow = response.headers.get("Allow")
    return {
        "status": response.status_code,
        "content": content,
        "content_type": response.headers.get("Content-Type"),
        "allow": sorted(allow.replace(" ", "").split(",")) if allow else None,
        "written": written,
    }


@pytest.mark.parametrize(
    "method, path, body", CORPUS, ids=[f"{i}-{m} {p}" for i, (m, p, _) in enumerate(CORPUS)]
)
def test_apps_answer_alike(servers, db, method, path, body):
    answers = {server.app: answer(server, db, method, path, body) for server in servers}
    reference = answers[servers[0].app]
    assert reference["status"] < 500, answers
    assert reference["written"] == (1 if reference["status"] == 201 else 0)
    different = {app: got for app, got in answers.items() if got != reference}
    assert not different, f"{servers[0].app}: {reference}\ndiffers from: {different}"
