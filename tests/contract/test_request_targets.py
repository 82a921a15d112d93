"""Request lines and header fields at the edges of RFC 9112 and RFC 9110, sent
raw to every app under its production server. Where the servers' parsers
disagreed, the apps now agree (AGREED); where a server decides before any app
code runs, the answer is the documented one (DOCUMENTED, and docs/contract.md,
"Errors from the servers"). Never a 5xx, never a dropped connection."""

import os

import pytest

from common import contract
from tests.faults import raw
from tests.helpers import port_of, query, serve

REVIEW = b'{"film_id": 995, "rating": 4}'
SERVER_ORDER = ("flask", "falcon", "quart", "sanic")


def request(line, fields=b"", body=b""):
    if body and b"Transfer-Encoding" not in fields:
        fields += b"Content-Length: %d\r\n" % len(body)
    return line + b"\r\nHost: x\r\nConnection: close\r\n" + fields + b"\r\n" + body


def chunked(*fields):
    head = b"Transfer-Encoding: " + b", ".join(fields) + b"\r\n"
    return head, b"%x\r\n%s\r\n0\r\n" % (len(REVIEW), REVIEW)


POST = b"POST /reviews/ HTTP/1.1"
# name: (request, status), the same in all four apps
AGREED = {
    "absolute-form target": (request(b"GET http://x/films/995/ HTTP/1.1"), 200),
    "authority-form target on GET": (request(b"GET x:80 HTTP/1.1"), 400),
    "target without its slash": (request(b"GET films/995/ HTTP/1.1"), 400),
    "target of a query only": (request(b"GET ?year.gt=1 HTTP/1.1"), 400),
    "tab in the target": (request(b"GET /films/995/\t HTTP/1.1"), 400),
    "control character in the target": (request(b"GET /films/\x01/ HTTP/1.1"), 400),
    "DEL in the target": (request(b"GET /\x7f HTTP/1.1"), 400),
    "method not a token": (request(b"G@T /health HTTP/1.1"), 400),
    "method in lower case": (request(b"get /health HTTP/1.1"), 400),
    "NUL in the method": (request(b"GET\x00 /health HTTP/1.1"), 400),
    "space in a field name": (request(POST, b"X A: 1\r\n", REVIEW), 400),
    "space before the colon": (request(POST, b"X-A : 1\r\n", REVIEW), 400),
    "@ in a field name": (request(POST, b"X@: 1\r\n", REVIEW), 400),
    "control character in a field name": (request(POST, b"X\x01: 1\r\n", REVIEW), 400),
    "empty field name": (request(POST, b": 1\r\n", REVIEW), 400),
    "NUL in a field value": (request(POST, b"X-A: a\x00b\r\n", REVIEW), 400),
    "two Host fields": (request(b"GET /health HTTP/1.1", b"Host: y\r\n"), 400),
    "a chunk extension": (
        request(POST, b"Transfer-Encoding: chunked\r\n", b"%x;a=b\r\n%s\r\n0\r\n\r\n" % (
            len(REVIEW), REVIEW)),
        201,
    ),
}  # fmt: skip
JSON, HTML, TEXT = "application/json", "text/html", "text/plain; charset=utf-8"
# name: (request, (status, content type) for flask, falcon, quart, sanic)
DOCUMENTED = {
    # RFC 9110 4.2.3: an empty path is "/"; httptools refuses the target.
    "absolute-form target without a path": (
        request(b"GET http://x HTTP/1.1"),
        ((404, JSON), (404, JSON), (400, TEXT), (404, JSON)),
    ),
    # RFC 9112 3.2.4: the asterisk-form is for OPTIONS only; the async servers
    # route it as the path "*".
    "asterisk-form target on GET": (
        request(b"GET * HTTP/1.1"),
        ((400, HTML), (400, HTML), (404, JSON), (404, JSON)),
    ),
    # RFC 9112 3.2.3: the authority-form is for CONNECT; gunicorn routes it as a path.
    "CONNECT to an authority": (
        request(b"CONNECT x:80 HTTP/1.1"),
        ((404, JSON), (404, JSON), (400, TEXT), (400, JSON)),
    ),
    # RFC 3986 allows any digits in a port; gunicorn ignores the authority,
    # httptools refuses a port above 65535.
    "absolute-form target with port 99999": (
        request(b"GET https://x:99999/health HTTP/1.1"),
        ((200, JSON), (200, JSON), (400, TEXT), (400, JSON)),
    ),
    # RFC 9112 7.1.2 allows trailer fields; Sanic's chunked reader does not.
    "a trailer field": (
        request(POST, chunked(b"chunked")[0], chunked(b"chunked")[1] + b"X-T: 1\r\n\r\n"),
        ((201, JSON), (201, JSON), (201, JSON), (400, JSON)),
    ),
    # RFC 9112 7: transfer-coding names are case-insensitive; Sanic's are not.
    "Transfer-Encoding: Chunked": (
        request(POST, chunked(b"Chunked")[0], chunked(b"Chunked")[1] + b"\r\n"),
        ((201, JSON), (201, JSON), (201, JSON), (400, JSON)),
    ),
    # RFC 9112 6.1: a coding the server does not know SHOULD be a 501; gunicorn
    # and uvicorn pass the body on undecoded, Sanic refuses it (nginx: 501).
    "Transfer-Encoding: gzip, chunked": (
        request(POST, chunked(b"gzip", b"chunked")[0], chunked(b"chunked")[1] + b"\r\n"),
        ((201, JSON), (201, JSON), (201, JSON), (400, JSON)),
    ),
    # RFC 9110 10.1.1: a server MAY answer 417 to an expectation it does not
    # know; uvicorn ignores it.
    "Expect: foo": (
        request(POST, b"Expect: foo\r\n", REVIEW),
        ((417, HTML), (417, HTML), (201, JSON), (417, JSON)),
    ),
}
MESSAGES = {
    400: contract.MALFORMED_REQUEST,
    404: contract.NOT_FOUND,
    417: contract.EXPECTATION_FAILED,
}

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("TEST_PROXY")), reason="TEST_PROXY: nginx parses these first"
)


def check(response, status, content_type, db):
    assert response is not None, "connection dropped without an answer"
    assert (response.status, response.headers["content-type"]) == (status, content_type)
    if content_type == JSON and status in MESSAGES:
        assert response.json() == {"error": MESSAGES[status]}
    stored = query(db, "SELECT count(*) FROM review")[0][0]
    assert stored == (1 if status == 201 else 0)


@pytest.mark.parametrize("name", AGREED)
def test_the_four_apps_agree(server, db, name):
    data, status = AGREED[name]
    response = raw(port_of(server), data, timeout=10)
    content_type = response and response.headers["content-type"]
    if content_type != JSON:  # the server's own 400, before the app (gunicorn, uvicorn)
        assert server.app in ("flask", "falcon", "quart") and status == 400
    check(response, status, content_type, db)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_each_server_answers_as_documented(server, db, name):
    data, answers = DOCUMENTED[name]
    status, content_type = answers[SERVER_ORDER.index(server.app)]
    check(raw(port_of(server), data, timeout=10), status, content_type, db)


@pytest.mark.slow  # starts its own Sanic
def test_sanic_waits_for_a_head_of_bare_line_feeds(database_url, tmp_path):
    """RFC 9112 2.2: a recipient MAY take a bare LF as a line terminator.
    gunicorn and uvicorn answer 400 (AGREED would say so); Sanic's parser waits
    for CRLF CRLF until REQUEST_TIMEOUT (60 s; 2 s here), then the 408."""
    bare = b"GET /health HTTP/1.1\nHost: x\nConnection: close\n\n"
    for server in serve("sanic", database_url, tmp_path, sanic_request_timeout=2):
        response = raw(port_of(server), bare, timeout=15)
    assert (response.status, response.json()) == (408, {"error": contract.REQUEST_TIMEOUT})
