"""The fast tier: the contract's cases (tests/corpus.py, as tests/contract/test_contract.py
sends them over HTTP) run against each app in this process, through its
framework's own test client: Flask's test_client, Quart's test_app, Sanic's
ASGI app (through httpx), falcon.testing. A real Postgres answers (the
embedded one), no server starts, and the whole module takes seconds.

The real-server suites stay the proof: what a server does before the app runs
(HTTP framing, chunked bodies, HEAD, slow clients) is theirs alone.
"""

import asyncio
import json
import uuid

import psycopg2
import pytest

from common import contract
from common.settings import Settings
from tests.corpus import (
    ERRORS,
    PADDED_KEY_IDS,
    PADDED_KEYS,
    PRECEDENCE,
    PRECEDENCE_IDS,
    REVIEW,
)
from tests.helpers import query
from tools.serve import APPS


class Response:
    """What every client below returns: status, Content-Type, parsed JSON."""

    def __init__(self, status, content_type, body):
        self.status, self.content_type = status, content_type
        self.json = json.loads(body) if body else None


class FlaskClient:
    def __init__(self, settings):
        from flask_app import create_app

        self.client = create_app(settings).test_client()

    def request(self, method, path, body=None, headers=None):
        response = self.client.open(path, method=method, data=body, headers=headers)
        return Response(response.status_code, response.content_type, response.data)

    def close(self):
        pass


class QuartClient:
    """Quart's test_app runs before_serving (the pool opens) and after_serving;
    every request runs on the one event loop the pool belongs to."""

    def __init__(self, settings):
        from quart_app import create_app

        self.runner = asyncio.Runner()
        self.test_app = create_app(settings).test_app()
        self.runner.run(self.test_app.__aenter__())
        self.client = self.test_app.test_client()

    def request(self, method, path, body=None, headers=None):
        if body is not None:  # as a server receives it: the app's 413 reads it
            headers = {"Content-Length": str(len(body)), **(headers or {})}

        async def send():
            response = await self.client.open(path, method=method, data=body, headers=headers)
            return Response(response.status_code, response.content_type, await response.data)

        return self.runner.run(send())

    def close(self):
        self.runner.run(self.test_app.__aexit__(None, None, None))
        self.runner.close()


class SanicClient:
    """Sanic's ASGI app through httpx's ASGI transport. The ASGI lifespan
    messages run its server start and stop listeners (the pool opens and
    closes), on the one event loop every request then runs on."""

    def __init__(self, settings):
        import httpx
        from sanic import Sanic

        from sanic_app import create_app

        Sanic.test_mode = True  # the app registry lets this process build another
        app = create_app(settings=settings)
        self.runner = asyncio.Runner()
        self.inbox, self.outbox = asyncio.Queue(), asyncio.Queue()
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
        self.lifespan = self.runner.get_loop().create_task(
            app(scope, self.inbox.get, self.outbox.put)
        )
        self.lifespan_step("startup")
        transport = httpx.ASGITransport(app=app)
        self.client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")

    def lifespan_step(self, step):
        async def send():
            await self.inbox.put({"type": f"lifespan.{step}"})
            message = await self.outbox.get()
            assert message["type"] == f"lifespan.{step}.complete", message

        self.runner.run(send())

    def request(self, method, path, body=None, headers=None):
        async def send():
            response = await self.client.request(method, path, content=body, headers=headers)
            content_type = response.headers.get("content-type")
            return Response(response.status_code, content_type, response.content)

        return self.runner.run(send())

    def close(self):
        self.runner.run(self.client.aclose())
        self.lifespan_step("shutdown")
        self.runner.close()


class FalconClient:
    def __init__(self, settings):
        import falcon.testing

        from falcon_app import create_app, db, upstream

        app = create_app(db.open_pool(settings), upstream.open_sources(settings))
        self.client = falcon.testing.TestClient(app)

    def request(self, method, path, body=None, headers=None):
        path, _, query_string = path.partition("?")  # as sent: "//health" is a path
        response = self.client.simulate_request(
            method, path, query_string=query_string, body=body, headers=headers
        )
        return Response(
            response.status_code, response.headers.get("content-type"), response.content
        )

    def close(self):
        pass


CLIENTS = {"flask": FlaskClient, "quart": QuartClient, "sanic": SanicClient, "falcon": FalconClient}


@pytest.fixture(scope="module", params=APPS)
def in_process(request, database_url):
    """(name, client) of each app, built by its own factory with a pool on the
    test database."""
    # In process the test's own blocking calls share the app's loop: no
    # admission by its lag here (tests/contract/test_admission.py has it).
    environ = {"DATABASE_URL": database_url, "POOL_MAX_SIZE": "2", "QUEUE_BUDGET": "0"}
    settings = Settings.from_env(environ)
    client = CLIENTS[request.param](settings)
    yield request.param, client
    client.close()


@pytest.fixture(scope="module")
def db(database_url):
    """One autocommit connection for the module: the tests read the review
    table before and after instead of emptying it (a TRUNCATE per test would
    take most of the module's time)."""
    connection = psycopg2.connect(database_url)
    connection.autocommit = True
    yield connection
    connection.close()


def reviews_after(db, review_id):
    """The reviews stored after review_id, in order."""
    sql = "SELECT review_id, film_id, rating FROM review WHERE review_id > %s ORDER BY review_id"
    return query(db, sql, review_id)


def last_review(db):
    return query(db, "SELECT coalesce(max(review_id), 0) FROM review")[0][0]


def assert_json(response, status, body):
    assert (response.status, response.json) == (status, body)
    assert response.content_type == "application/json"


def test_get_film(in_process, db):
    [(title, year)] = query(db, "SELECT title, release_year FROM film WHERE film_id = 995")
    for path in ("/films/995/", "/films/995", "/films/0995/"):
        response = in_process[1].request("GET", path)
        assert_json(response, 200, {"film_id": 995, "release_year": year, "title": title})


@pytest.mark.parametrize("query_string, year", [("", 2000), ("?year.gt=2010", 2010)])
def test_get_films(in_process, db, query_string, year):
    rows = query(db, "SELECT film_id, release_year, title FROM film WHERE release_year > %s", year)
    expected = {str(film_id): {"release_year": y, "title": t} for film_id, y, t in rows}
    for path in ("/films/", "/films"):
        assert_json(in_process[1].request("GET", path + query_string), 200, expected)


def test_health(in_process):
    for path in ("/health", "/health/"):
        assert_json(in_process[1].request("GET", path), 200, {"status": "ok"})


@pytest.mark.parametrize(
    "body",
    [
        json.dumps(REVIEW),
        json.dumps({**REVIEW, "extra": [1]}),
        json.dumps({"film_id": 1, "rating": 5}),
        json.dumps({**REVIEW, "pad": ""}).ljust(contract.MAX_BODY_BYTES),
    ],
    ids=["review", "extra-member", "edges", "exactly-the-limit"],
)
def test_post_review(in_process, db, body):
    before = last_review(db)
    response = in_process[1].request(
        "POST", "/reviews/", body.encode(), {"Content-Type": "text/plain"}
    )
    [(review_id, film_id, rating)] = reviews_after(db, before)
    sent = json.loads(body)
    assert_json(response, 201, {"review_id": review_id, "film_id": film_id, "rating": rating})
    assert (film_id, rating) == (sent["film_id"], sent["rating"])


@pytest.mark.parametrize(
    "method, path, body, status, message",
    ERRORS,
    ids=[f"{m} {p} {b[:24]!r} {s}" if b else f"{m} {p} {s}" for m, p, b, s, _ in ERRORS],
)
def test_errors(in_process, db, method, path, body, status, message):
    before = last_review(db)
    assert_json(in_process[1].request(method, path, body), status, {"error": message})
    assert reviews_after(db, before) == []


# A chunked body is the HTTP suites' (tests/contract/test_idempotency.py): not every
# test client can send one.
DECLARED = [
    (case, id_)
    for case, id_ in zip(PRECEDENCE, PRECEDENCE_IDS, strict=True)
    if isinstance(case[1], bytes)
]


@pytest.mark.parametrize(
    ("key", "body", "status", "message"),
    [case for case, _ in DECLARED],
    ids=[id_ for _, id_ in DECLARED],
)
def test_two_errors_at_once_answer_the_first_in_the_contracts_order(
    in_process, db, key, body, status, message
):
    before = last_review(db)
    response = in_process[1].request("POST", "/reviews/", body, {"Idempotency-Key": key})
    assert_json(response, status, {"error": message})
    assert reviews_after(db, before) == []


@pytest.mark.parametrize("sent", PADDED_KEYS, ids=PADDED_KEY_IDS)
def test_whitespace_around_the_key_is_not_part_of_it(in_process, db, sent):
    key = f"in-process-{uuid.uuid4()}"  # this module keeps the table: a key of its own
    body = json.dumps(REVIEW).encode()
    before = last_review(db)
    first = in_process[1].request(
        "POST", "/reviews/", body, {"Idempotency-Key": sent.replace("k-1", key)}
    )
    [(review_id, _, _)] = reviews_after(db, before)
    assert_json(first, 201, {"review_id": review_id, **REVIEW})
    assert query(db, "SELECT idempotency_key FROM review WHERE review_id = %s", review_id) == [
        (key,)
    ]
    assert_json(
        in_process[1].request("POST", "/reviews/", body, {"Idempotency-Key": key}), 201, first.json
    )
