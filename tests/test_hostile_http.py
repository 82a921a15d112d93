"""Hostile input over raw sockets, to every app under its production server:
generated bodies (nesting, huge numbers, odd encodings), broken HTTP framing,
long paths and query values. No answer is a 5xx or a hang; what the apps
answer themselves is the contract's JSON, the same in all four; what a server
answers before the app sees the request is listed in SERVER_ANSWERS (and in
docs/contract.md), and behind the proxy that too is the contract's JSON."""

import json
import os
import random
from dataclasses import dataclass

import pytest

from common import contract
from db.embedded import free_port
from tests.faults import nginx, raw
from tests.helpers import query, serve
from tools import proxy

SEED = 10


@dataclass
class Proxied:
    app: str
    port: int


@pytest.fixture(scope="module")
def proxied(server, tmp_path_factory):
    """nginx (tools/proxy.py) in front of the app that `server` runs."""
    nginx()
    port = free_port()
    log_path = tmp_path_factory.mktemp("logs") / f"nginx-{server.app}-{port}.log"
    with open(log_path, "w") as log:
        handle = proxy.start(port_of(server), port, log)
    yield Proxied(server.app, port)
    proxy.stop(handle)


def port_of(server):
    return int(server.url.rsplit(":", 1)[1])


def post(body, headers=""):
    return (
        f"POST /reviews/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def chunked(framing):
    return (
        b"POST /reviews/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + framing
    )


def get(target):
    return f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()


def hostile_bodies():
    """(name, body, expected status): every one of them the contract's 400 or 422."""
    rng = random.Random(SEED)
    bodies = [
        ("arrays nested 60 KB deep", b"[" * 60_000, 400),
        ("objects nested 10,000 deep", b'{"a":' * 10_000 + b"1" + b"}" * 10_000, 400),
        ("arrays nested 1,000 deep, closed", b"[" * 1000 + b"]" * 1000, 400),
        ("arrays nested 33 deep", b"[" * 33 + b"]" * 33, 400),
        ("arrays nested 32 deep", b"[" * 32 + b"]" * 32, 422),
        ("brackets in a string", b'{"film_id": 0, "rating": 4, "c": "' + b"[" * 40 + b'"}', 422),
        ("film_id of 5,000 digits", b'{"film_id": ' + b"9" * 5000 + b', "rating": 4}', 400),
        ("film_id of 4,000 digits", b'{"film_id": ' + b"9" * 4000 + b', "rating": 4}', 422),
        ("rating 1e400", b'{"film_id": 995, "rating": 1e400}', 422),
        ("rating -0", b'{"film_id": 995, "rating": -0.0}', 422),
        ("UTF-16", json.dumps({"film_id": 995, "rating": 4}).encode("utf-16"), 400),
        ("UTF-32", json.dumps({"film_id": 995, "rating": 4}).encode("utf-32"), 400),
        ("UTF-8 BOM", b"\xef\xbb\xbf" + b'{"film_id": 995, "rating": 4}', 400),
        ("overlong UTF-8", b'{"film_id": 995, "rating": 4, "c": "\xc0\xaf"}', 400),
        ("lone surrogate escape", b'{"film_id": 995, "rating": "\\ud800"}', 422),
        ("NUL bytes", b'{"film_id": 995,\x00 "rating": 4}', 400),
        ("Infinity", b'{"film_id": 995, "rating": Infinity}', 400),
        ("empty", b"", 400),
    ]
    for depth in (rng.randrange(2_000, 12_000) for _ in range(3)):  # 5 bytes x 12,000 < 64 KB
        opener = rng.choice([b"[", b'{"x":'])
        bodies.append((f"generated nesting {depth}", opener * depth, 400))
    for digits in (rng.randrange(4_301, 20_000) for _ in range(3)):
        bodies.append((f"generated {digits}-digit number", b"1" * digits, 400))
    return bodies


BODIES = hostile_bodies()


@pytest.mark.parametrize(("name", "body", "status"), BODIES, ids=[b[0] for b in BODIES])
def test_hostile_body(server, db, name, body, status):
    response = raw(port_of(server), post(body))
    assert response.status == status, response.body
    assert response.headers["content-type"] == "application/json"
    assert set(response.json()) == {"error"}
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


TARGETS = [
    # (name, request target, status): the app's own answers, below every server's limits
    ("film id of 3,000 digits", "/films/" + "9" * 3000 + "/", 404),
    ("film id with 3,000 leading zeros", "/films/" + "0" * 3000 + "995/", 200),
    ("year of 3,000 digits", "/films/?year.gt=" + "9" * 3000, 400),
    ("year with 3,000 leading zeros", "/films/?year.gt=-" + "0" * 3000 + "1", 200),
    ("400 query parameters", "/films/?" + "&".join(f"p{i}=1" for i in range(400)), 200),
    ("a path of 3,000 bytes", "/" + "a" * 3000, 404),
]


@pytest.mark.parametrize(("name", "target", "status"), TARGETS, ids=[t[0] for t in TARGETS])
def test_long_path_and_query(server, name, target, status):
    response = raw(port_of(server), get(target))
    assert response.status == status
    assert response.headers["content-type"] == "application/json"


# Refused by the server itself, before the app (docs/contract.md, "Errors from
# the servers"): status and body, per app, where a server's own answer differs
# from the contract's JSON. Behind the proxy, nginx refuses them first, as JSON.
FRAMING = {
    "chunk size zz": chunked(b"zz\r\n{}\r\n0\r\n\r\n"),
    "chunk size -1": chunked(b"-1\r\n{}\r\n0\r\n\r\n"),
    "chunk without its CRLF": chunked(b"2\r\n{}XX0\r\n\r\n"),
    "Content-Length abc": b"POST /reviews/ HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
    "not HTTP": b"HELLO\r\n\r\n",
    "request line of 20,000 bytes": get("/films/" + "9" * 20_000 + "/"),
    "header line of 70,000 bytes": b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: "
    + b"a" * 70_000
    + b"\r\n\r\n",
}
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
HTML = "text/html"
SERVER_ORDER = ("flask", "falcon", "quart", "sanic")
SERVER_ANSWERS = {
    # name: (status, content type) for flask, falcon, quart, sanic; JSON ones
    # carry the contract's message
    "chunk size zz": ((400, JSON), (400, JSON), (400, TEXT), (400, JSON)),
    "chunk size -1": ((400, JSON), (400, JSON), (400, TEXT), (400, JSON)),
    # Sanic's parser takes the chunk and leaves "XX0" unread: the body {} is read.
    "chunk without its CRLF": ((400, JSON), (400, JSON), (400, TEXT), (422, JSON)),
    "Content-Length abc": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "not HTTP": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    # httptools has no line limit: the app's own 404.
    "request line of 20,000 bytes": ((414, HTML), (414, HTML), (404, JSON), (431, JSON)),
    # uvicorn has no header limit: the app answers.
    "header line of 70,000 bytes": ((431, HTML), (431, HTML), (200, JSON), (431, JSON)),
}
PROXY_ANSWERS = {
    "chunk size zz": 400,
    "chunk size -1": 400,
    "chunk without its CRLF": 400,
    "Content-Length abc": 400,
    "not HTTP": 400,
    "request line of 20,000 bytes": 414,
    "header line of 70,000 bytes": 431,
}
MESSAGES = {
    400: contract.MALFORMED_REQUEST,
    404: contract.FILM_NOT_FOUND,
    414: contract.URI_TOO_LONG,
    422: contract.BAD_FILM_ID,
    431: contract.HEADERS_TOO_LARGE,
}


@pytest.mark.parametrize("name", FRAMING)
def test_server_refuses_framing(server, db, name):
    """Never a 5xx, never a hang; the server's own answer is the documented one."""
    if os.environ.get("TEST_PROXY"):
        pytest.skip("TEST_PROXY: nginx answers these (test_proxy_refuses_framing_as_json)")
    response = raw(port_of(server), FRAMING[name])
    status, content_type = SERVER_ANSWERS[name][SERVER_ORDER.index(server.app)]
    assert (response.status, response.headers["content-type"]) == (status, content_type)
    if content_type == JSON and status != 200:
        assert response.json() == {"error": MESSAGES[status]}
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


@pytest.mark.parametrize("name", FRAMING)
def test_proxy_refuses_framing_as_json(proxied, db, name):
    """Through nginx every one of them is the contract's JSON, whatever the app."""
    response = raw(proxied.port, FRAMING[name])
    status = PROXY_ANSWERS[name]
    assert (response.status, response.headers["content-type"]) == (status, JSON)
    assert response.json() == {"error": MESSAGES[status]}
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


@pytest.mark.parametrize(("name", "body", "status"), BODIES[:4], ids=[b[0] for b in BODIES[:4]])
def test_proxy_passes_the_apps_answers(proxied, name, body, status):
    response = raw(proxied.port, post(body))
    assert response.status == status
    assert response.headers["content-type"] == JSON


@pytest.mark.parametrize(
    ("target", "status", "allow"),
    [("/health", 405, "GET, HEAD"), ("/films/995/", 405, "GET, HEAD"), ("/reviews/", 405, "POST"),
     ("/nope", 404, None)],
)  # fmt: skip
def test_proxy_answers_trace_as_the_apps_would(proxied, target, status, allow):
    """nginx refuses TRACE itself, before the app: with the app's status and Allow."""
    response = raw(proxied.port, f"TRACE {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert (response.status, response.headers.get("allow")) == (status, allow)
    assert response.headers["content-type"] == JSON


@pytest.mark.slow  # starts its own Sanic
def test_sanic_stalled_body_is_the_contracts_408(database_url, tmp_path):
    """Sanic reads a body under RESPONSE_TIMEOUT and would answer its own 503
    "Response Timeout"; the contract says 408 (docs/contract.md). Shortened from
    60 s to 2 s here through Sanic's own SANIC_ environment variables."""
    if os.environ.get("TEST_PROXY"):
        pytest.skip("TEST_PROXY: nginx cuts a stalled body itself (after 10 s, no answer)")
    server_generator = serve("sanic", database_url, tmp_path, sanic_response_timeout=2)
    server = next(server_generator)
    try:
        stalled = b"POST /reviews/ HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\n\r\n{"
        response = raw(port_of(server), stalled)
    finally:
        server_generator.close()
    assert (response.status, response.json()) == (408, {"error": contract.REQUEST_TIMEOUT})
    assert response.seconds < 10
