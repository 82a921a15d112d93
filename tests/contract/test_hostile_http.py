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
from tests.deploy import test_proxy_config
from tests.faults import nginx, raw
from tests.helpers import port_of, query, serve
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
# the servers"), or answered where the servers differ on RFC 9112's rules:
# status and content type, per app. Behind the proxy every one of them is the
# contract's JSON, the same for the four apps.
def head(line, fields="Host: x\r\n"):
    return f"{line}\r\n{fields}Connection: close\r\n\r\n".encode()


def framed(fields, body):
    return head("POST /reviews/ HTTP/1.1", f"Host: x\r\n{fields}") + body


def request_line(length):
    """A GET of film 1, padded with leading zeros to a request line of `length`."""
    padding = "0" * (length - len("GET /films/1/ HTTP/1.1"))
    return head(f"GET /films/{padding}1/ HTTP/1.1")


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
    # RFC 9112 6: message framing
    "Transfer-Encoding gzip": head(
        "GET /health HTTP/1.1", "Host: x\r\nTransfer-Encoding: gzip\r\n"
    ),
    "Transfer-Encoding gzip, chunked": framed(
        "Transfer-Encoding: gzip, chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n"
    ),
    "Transfer-Encoding chunked, gzip": framed(
        "Transfer-Encoding: chunked, gzip\r\n", b"2\r\n{}\r\n0\r\n\r\n"
    ),
    "chunked and Content-Length": framed(
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", b"0\r\n\r\n"
    ),
    "chunked and a Content-Length over the limit": framed(
        "Transfer-Encoding: chunked\r\nContent-Length: 100000\r\n", b"0\r\n\r\n"
    ),
    "chunked in HTTP/1.0": b"POST /reviews/ HTTP/1.0\r\nHost: x\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    "two different Content-Lengths": framed("Content-Length: 2\r\nContent-Length: 3\r\n", b"{}"),
    "Content-Length +2": framed("Content-Length: +2\r\n", b"{}"),
    "Content-Length of 20 digits": framed("Content-Length: " + "9" * 20 + "\r\n", b"{}"),
    "Expect: 200-ok": framed("Expect: 200-ok\r\nContent-Length: 2\r\n", b"{}"),
    "chunk extension": framed("Transfer-Encoding: chunked\r\n", b"2;x=1\r\n{}\r\n0\r\n\r\n"),
    "trailer field": framed("Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n"),
    # RFC 9112 5: field syntax
    "obs-fold": head("GET /health HTTP/1.1", "Host: x\r\nX-A: a\r\n b\r\n"),
    "space before the colon": head("GET /health HTTP/1.1", "Host: x\r\nX-A : a\r\n"),
    "NUL in a field value": head("GET /health HTTP/1.1", "Host: x\r\nX-A: a\x00b\r\n"),
    "bare LF line ends": b"GET /health HTTP/1.1\nHost: x\nConnection: close\n\n",
    "a control character in a field value": head(
        "GET /health HTTP/1.1", "Host: x\r\nX-A: a\x01b\r\n"
    ),
    "a UTF-8 field name": head("GET /health HTTP/1.1", "Host: x\r\nX-\u00e9: a\r\n"),
    "X-Forwarded-For in three lines of 3,000 bytes": head(
        "GET /health HTTP/1.1", "Host: x\r\n" + f"X-Forwarded-For: {'1' * 3000}\r\n" * 3
    ),
    # RFC 9112 2.3 and 3.2: version and Host
    "HTTP/2.5": head("GET /health HTTP/2.5"),
    "HTTP/1.2": head("GET /health HTTP/1.2"),
    "http/1.1 in lower case": head("GET /health http/1.1"),
    "HTTP/1.1 without Host": head("GET /health HTTP/1.1", ""),
    "two Host fields": head("GET /health HTTP/1.1", "Host: x\r\nHost: y\r\n"),
    "an empty Host": head("GET /health HTTP/1.1", "Host:\r\n"),
    # RFC 9112 3.2: request target
    "absolute-form": head("GET http://x/health HTTP/1.1"),
    "asterisk-form": head("OPTIONS * HTTP/1.1"),
    "authority-form": head("CONNECT x:80 HTTP/1.1"),
    "a fragment": head("GET /health#x HTTP/1.1"),
    "a raw UTF-8 byte in the target": head("GET /films/\u00e9/ HTTP/1.1"),
    "%zz in the path": head("GET /films/%zz/ HTTP/1.1"),
    "a target without its /": head("GET health HTTP/1.1"),
    "two spaces after the method": head("GET  /health HTTP/1.1"),
    "request line of 4,094 bytes": request_line(4094),
    "request line of 4,095 bytes": request_line(4095),
    # RFC 9110 9.1: a method is a case-sensitive token
    "method FOO": head("FOO /health HTTP/1.1"),
    "method PURGE": head("PURGE /health HTTP/1.1"),
    "method get": head("get /health HTTP/1.1"),
    "method GE(T": head("GE(T /health HTTP/1.1"),
    "method of 30 letters": head("A" * 30 + " /health HTTP/1.1"),
    # Header limits (gunicorn's 100 fields are raised: serve.sh)
    "101 header fields": head("GET /health HTTP/1.1", "Host: x\r\n" + "X-A: b\r\n" * 100),
    "990 header fields": head("GET /health HTTP/1.1", "Host: x\r\n" + "X-A: b\r\n" * 989),
    "1,200 header fields": head("GET /health HTTP/1.1", "Host: x\r\n" + "X-A: b\r\n" * 1199),
    "a head of 20 KB": head("GET /health HTTP/1.1", "Host: x\r\n" + f"X-A: {'a' * 1000}\r\n" * 20),
    # RFC 9110 7.8: a server may ignore Upgrade, and these do: a plain GET
    "Upgrade: websocket": head(
        "GET /health HTTP/1.1",
        "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n",
    ),
    "Upgrade: h2c": head(
        "GET /health HTTP/1.1",
        "Host: x\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n"
        "HTTP2-Settings: AAMAAABkAAQAAP__\r\n",
    ),
}
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
HTML = "text/html"
SERVER_ORDER = ("flask", "falcon", "quart", "sanic")
# Sanic waits for a head that ends in CRLF CRLF: no answer (until its 60 s
# REQUEST_TIMEOUT), where the others answer at once.
NO_ANSWER = None
OK, CREATED, NOT_A_REVIEW = (200, JSON), (201, JSON), (422, JSON)
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
    "Transfer-Encoding gzip": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    # gunicorn and uvicorn decode the chunks and hand on the gzip unread.
    "Transfer-Encoding gzip, chunked": (NOT_A_REVIEW, NOT_A_REVIEW, NOT_A_REVIEW, (400, JSON)),
    "Transfer-Encoding chunked, gzip": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "chunked and Content-Length": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "chunked and a Content-Length over the limit": (
        (400, HTML),
        (400, HTML),
        (400, TEXT),
        (400, JSON),
    ),  # fmt: skip
    # RFC 9112 6.1 says faulty framing; uvicorn and Sanic read the chunks.
    "chunked in HTTP/1.0": ((400, HTML), (400, HTML), NOT_A_REVIEW, NOT_A_REVIEW),
    "two different Content-Lengths": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "Content-Length +2": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "Content-Length of 20 digits": ((413, JSON), (413, JSON), (400, TEXT), (413, JSON)),
    # RFC 9110 10.1.1: a server MAY answer 417 to an expectation it does not know.
    "Expect: 200-ok": ((417, HTML), (417, HTML), NOT_A_REVIEW, (417, JSON)),
    "chunk extension": (NOT_A_REVIEW,) * 4,
    "trailer field": (NOT_A_REVIEW, NOT_A_REVIEW, NOT_A_REVIEW, (400, JSON)),
    "obs-fold": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "space before the colon": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "NUL in a field value": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "bare LF line ends": ((400, HTML), (400, HTML), (400, TEXT), NO_ANSWER),
    # RFC 9110 5.5: no control character but HTAB in a value.
    "a control character in a field value": ((400, HTML), (400, HTML), (400, TEXT), OK),
    "a UTF-8 field name": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "X-Forwarded-For in three lines of 3,000 bytes": (OK, OK, OK, OK),
    "HTTP/2.5": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    # RFC 9112 2.3: a later 1.x minor version is served as 1.1; uvicorn and
    # Sanic refuse it.
    "HTTP/1.2": (OK, OK, (400, TEXT), (400, JSON)),
    "http/1.1 in lower case": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    # RFC 9112 3.2 says 400 for both; nginx does, the servers answer.
    "HTTP/1.1 without Host": (OK, OK, OK, OK),
    "two Host fields": ((400, HTML), (400, HTML), (400, JSON), (400, JSON)),
    "an empty Host": (OK, OK, OK, OK),
    "absolute-form": (OK, OK, OK, OK),
    "asterisk-form": ((404, JSON),) * 4,
    "authority-form": ((404, JSON), (404, JSON), (400, TEXT), (400, JSON)),
    "a fragment": (OK, OK, OK, OK),
    # RFC 3986: not a URI. nginx passed it on, as gunicorn's HTML and uvicorn's text.
    "a raw UTF-8 byte in the target": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "%zz in the path": ((404, JSON),) * 4,  # names no route
    "a target without its /": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "two spaces after the method": ((400, HTML), (400, HTML), OK, (400, JSON)),
    "request line of 4,094 bytes": (OK, OK, OK, OK),
    "request line of 4,095 bytes": ((414, HTML), (414, HTML), OK, OK),
    # httptools knows a fixed list of methods (PURGE is on it, FOO not), and
    # gunicorn and httptools only upper-case ones; Sanic any token (not GE(T).
    "method FOO": ((405, JSON), (405, JSON), (400, TEXT), (405, JSON)),
    "method PURGE": ((405, JSON),) * 4,
    "method get": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "method GE(T": ((400, HTML), (400, HTML), (400, TEXT), (400, JSON)),
    "method of 30 letters": ((400, HTML), (400, HTML), (400, TEXT), (405, JSON)),
    "101 header fields": (OK, OK, OK, OK),
    "990 header fields": (OK, OK, OK, OK),
    "1,200 header fields": (OK, OK, OK, OK),
    "a head of 20 KB": (OK, OK, OK, (431, JSON)),
    "Upgrade: websocket": (OK, OK, OK, OK),
    "Upgrade: h2c": (OK, OK, OK, OK),
}
PROXY_ANSWERS = {
    "chunk size zz": 400,
    "chunk size -1": 400,
    "chunk without its CRLF": 400,
    "Content-Length abc": 400,
    "not HTTP": 400,
    "request line of 20,000 bytes": 414,
    "header line of 70,000 bytes": 431,
    "Transfer-Encoding gzip": 501,
    "Transfer-Encoding gzip, chunked": 501,
    "Transfer-Encoding chunked, gzip": 501,
    "chunked and Content-Length": 400,
    "chunked and a Content-Length over the limit": 400,
    "chunked in HTTP/1.0": 400,
    "two different Content-Lengths": 400,
    "Content-Length +2": 400,
    "Content-Length of 20 digits": 400,  # more than nginx's off_t holds
    "Expect: 200-ok": 422,  # nginx reads the body itself, and drops Expect
    "chunk extension": 422,
    "trailer field": 422,
    "obs-fold": 400,
    "space before the colon": 400,
    "NUL in a field value": 400,
    "bare LF line ends": 200,  # RFC 9112 2.2 allows a lone LF
    "a control character in a field value": None,  # passed on: PASSED_ON
    "a UTF-8 field name": 200,  # nginx drops a field with an invalid name
    "X-Forwarded-For in three lines of 3,000 bytes": 200,
    "HTTP/2.5": 505,
    "HTTP/1.2": 200,
    "http/1.1 in lower case": 400,
    "HTTP/1.1 without Host": 400,
    "two Host fields": 400,
    "an empty Host": 400,
    "absolute-form": 200,
    "asterisk-form": 400,
    "authority-form": 400,
    "a fragment": 200,
    "a raw UTF-8 byte in the target": 400,
    "%zz in the path": 400,  # nginx decodes the path to route it
    "a target without its /": 400,
    "two spaces after the method": 200,
    "request line of 4,094 bytes": 200,
    "request line of 4,095 bytes": 414,
    "method FOO": 405,
    "method PURGE": 405,
    "method get": 400,  # nginx takes upper-case methods only
    "method GE(T": 400,
    "method of 30 letters": 405,
    "101 header fields": 200,
    "990 header fields": 200,
    "1,200 header fields": 431,  # nginx's cap: 1,000 fields
    "a head of 20 KB": 431,  # nginx's buffers: 1 KB + 4 x 4 KB
    "Upgrade: websocket": 200,
    "Upgrade: h2c": 200,
}
# nginx checks no field value: a control character in one reaches the server
# behind it, which answers as it does directly (docs/contract.md).
PASSED_ON = {"a control character in a field value"}
MESSAGES = {
    400: contract.MALFORMED_REQUEST,
    405: contract.METHOD_NOT_ALLOWED,
    413: contract.BODY_TOO_LARGE,
    414: contract.URI_TOO_LONG,
    422: contract.BAD_FILM_ID,
    431: contract.HEADERS_TOO_LARGE,
    501: contract.PROXY_MESSAGES[501],
    505: contract.PROXY_MESSAGES[505],
}


@pytest.mark.parametrize("name", FRAMING)
def test_server_refuses_framing(server, db, name):
    """Never a 5xx, never a hang; the server's own answer is the documented one."""
    if os.environ.get("TEST_PROXY"):
        pytest.skip("TEST_PROXY: nginx answers these (test_proxy_refuses_framing_as_json)")
    answer = SERVER_ANSWERS[name][SERVER_ORDER.index(server.app)]
    if answer is NO_ANSWER:
        with pytest.raises(TimeoutError):
            raw(port_of(server), FRAMING[name], timeout=3)
        return
    response = raw(port_of(server), FRAMING[name])
    status, content_type = answer
    assert (response.status, response.headers["content-type"]) == (status, content_type)
    if content_type == JSON and status in MESSAGES:
        assert response.json() == {"error": MESSAGES[status]}
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


@pytest.mark.parametrize("name", FRAMING)
def test_proxy_refuses_framing_as_json(proxied, db, name):
    """Through nginx every one is the contract's JSON, the same whatever the app, but
    PASSED_ON: what nginx lets through, answered as the server answers it."""
    response = raw(proxied.port, FRAMING[name])
    if name in PASSED_ON:
        answer = SERVER_ANSWERS[name][SERVER_ORDER.index(proxied.app)]
        assert (response.status, response.headers["content-type"]) == answer
        return
    status = PROXY_ANSWERS[name]
    assert (response.status, response.headers["content-type"]) == (status, JSON)
    if status in MESSAGES:
        assert response.json() == {"error": MESSAGES[status]}
    if status == 405:
        assert response.headers["allow"] == "GET, HEAD"
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


STATUSES = sorted(set(test_proxy_config.NGINX_PAGES) - {405})  # 405: the method tests


@pytest.fixture(scope="module")
def nginx_statuses(tmp_path_factory):
    """nginx with api.inc and one location per status it can answer by itself,
    `return`ing it: its own error, as a parse failure or a timeout would give."""
    nginx()
    port = free_port()
    rules = "".join(f"location = /.status/{code} {{ return {code}; }}\n" for code in STATUSES)
    log_path = tmp_path_factory.mktemp("logs") / f"nginx-statuses-{port}.log"
    with open(log_path, "w") as log:
        handle = proxy.start(free_port(), port, log, extra_rules=rules)  # no app behind
    yield port
    proxy.stop(handle)


@pytest.mark.slow  # starts nginx
@pytest.mark.parametrize("code", STATUSES)
def test_every_nginx_error_is_the_contracts_json(nginx_statuses, code):
    response = raw(nginx_statuses, get(f"/.status/{code}"))
    if code == 408:  # nginx never sends its 408: it closes the connection
        assert response is None
        return
    status = test_proxy_config.RESTATED.get(code, code)
    assert (response.status, response.headers["content-type"]) == (status, JSON)
    assert response.json() == {"error": contract.PROXY_MESSAGES[status]}


@pytest.mark.slow  # starts nginx
def test_the_app_down_is_the_contracts_503(nginx_statuses):
    """No app behind this nginx: connection refused, nginx's 502, the contract's 503."""
    response = raw(nginx_statuses, get("/films/995/"))
    assert (response.status, response.json()) == (503, {"error": contract.PROXY_MESSAGES[503]})


@pytest.mark.slow  # starts each app twice
@pytest.mark.parametrize("app", SERVER_ORDER)
def test_allow_is_in_the_same_order_in_every_process(app, database_url, tmp_path):
    """The frameworks collect a route's methods in a set, iterated in the order
    of the process's hash seed; the apps sort them (common.contract.allow_header)."""
    if os.environ.get("TEST_PROXY"):
        pytest.skip("TEST_PROXY: the apps' own Allow is what this checks")
    seen = set()
    for seed in ("1", "3"):  # GET and HEAD iterate in both orders
        generator = serve(app, database_url, tmp_path, web_workers=1, pythonhashseed=seed)
        server = next(generator)
        try:
            response = raw(port_of(server), head("PUT /films/995/ HTTP/1.1"))
        finally:
            generator.close()
        seen.add(response.headers["allow"])
    assert seen == {"GET, HEAD"}
