"""The API contract's input rules, shared by the four apps.

Each app converts its framework's raw input (path segment, query string, body
bytes) with these functions at the edge, and turns ContractError into the same
JSON error: ``{"error": message}`` with ``status``. docs/contract.md explains
the choices; api/openapi.yaml states them for tools.
"""

import itertools
import json
import re

MAX_BODY_BYTES = 64 * 1024  # a review is a few dozen bytes
# A review nests one level deep. Python's parser recurses per level, and how
# deep it gets before a RecursionError depends on the server's stack: a fixed
# limit gives every app the same answer.
MAX_JSON_DEPTH = 32
MAX_IDEMPOTENCY_KEY = 255  # a UUID is 36; the column is varchar(255)
INT4_MAX = 2**31 - 1  # the id and year columns are Postgres integers
DEFAULT_YEAR = 2000

# The error messages, identical in every app.
NOT_FOUND = "not found"
METHOD_NOT_ALLOWED = "method not allowed"
BODY_TOO_LARGE = f"request body is larger than {MAX_BODY_BYTES} bytes"
FILM_NOT_FOUND = "film not found"
BAD_YEAR = "year.gt must be an integer"
BAD_JSON = "request body must be UTF-8 encoded JSON"
NOT_AN_OBJECT = "review must be a JSON object"
BAD_FILM_ID = "film_id must be an integer"
BAD_RATING = "rating must be an integer from 1 to 5"
UNKNOWN_FILM = "film_id does not name a film"
BAD_IDEMPOTENCY_KEY = (
    "Idempotency-Key must be one header of 1 to 255 visible ASCII characters, no comma"
)
IDEMPOTENCY_KEY_REUSED = "Idempotency-Key was already used for another review"
DATABASE_UNAVAILABLE = "database unavailable"
# Past capacity: a request that could not start within QUEUE_BUDGET
# (common/admission.py), answered with Retry-After.
OVERLOADED = "server overloaded, retry later"
# GET /films/<film_id>/ratings/ when every rating source failed (common/ratings.py).
NO_RATING_SOURCE = "no rating source answered"
NO_RATING_SOURCE_IN_TIME = "no rating source answered in time"
INTERNAL_ERROR = "internal server error"
# What the servers and the proxy refuse before an app sees a request, where
# they let us say it in JSON (docs/contract.md, "Errors from the servers").
MALFORMED_REQUEST = "malformed HTTP request"
URI_TOO_LONG = "request line is too long"
HEADERS_TOO_LARGE = "request headers are too large"
REQUEST_TIMEOUT = "request not received in time"
# What nginx answers by itself (proxy/api.inc): every status it has a page for,
# but for redirects and TLS, keyed by the status the client gets.
PROXY_MESSAGES = {
    400: MALFORMED_REQUEST,
    401: "authorization required",
    402: "payment required",
    403: "forbidden",
    404: NOT_FOUND,
    405: METHOD_NOT_ALLOWED,
    406: "not acceptable",
    408: REQUEST_TIMEOUT,
    409: "conflict",
    410: "gone",
    411: "length required",
    412: "precondition failed",
    413: BODY_TOO_LARGE,
    414: URI_TOO_LONG,
    415: "unsupported media type",
    416: "range not satisfiable",
    421: "misdirected request",
    429: "too many requests",
    431: HEADERS_TOO_LARGE,  # nginx's 494
    500: INTERNAL_ERROR,
    501: "transfer coding not implemented",
    503: "app unavailable",  # and nginx's 502 and 504: the app is down or silent
    505: "HTTP version not supported",
    507: "insufficient storage",
}
EXPECTATION_FAILED = "the only expectation supported is 100-continue"

# What Postgres answers when it cannot serve a request now, however well-formed
# the request: SQLSTATE classes (two characters) and codes, each the contract's
# 503 DATABASE_UNAVAILABLE, which a client may retry. 08 connection, 28 login
# refused (pg_hba.conf, role, password), 3D000 no such database, 40 transaction
# rolled back (deadlock, serialization), 53 out of resources, 55 object in use
# or lock not available, 57 operator intervention (shutting down, statement
# cancelled), 58 system error, 25006 read-only transaction (a hot standby, after
# a failover), 2200H sequence exhausted (review_id has no number left for a new
# review: an operator's to fix, like a full disk; a replay draws none and is
# still answered). In each the statement did not commit: nothing was written.
UNAVAILABLE_SQLSTATES = ("08", "2200H", "25006", "28", "3D000", "40", "53", "55", "57", "58")

# A sign, leading zeros, then at most 10 digits: int4's range, checked before
# int(), which refuses strings of more than 4,300 digits with a ValueError.
_DIGITS = re.compile(r"0*([0-9]{1,10})")
_SIGNED_DIGITS = re.compile(r"(-?)0*([0-9]{1,10})")
# Visible ASCII but the comma: gunicorn joins repeated headers with commas, so
# a comma would make one key out of two headers in Flask and Falcon.
_IDEMPOTENCY_KEY = re.compile(rf"[\x21-\x2b\x2d-\x7e]{{1,{MAX_IDEMPOTENCY_KEY}}}")
_OWS = " \t"  # RFC 9110 5.6.3: SP and HTAB
# The depth check runs at C speed, linear in the body's size: the strings go
# (their brackets are not structure), then everything but brackets, then the
# running depth is summed by itertools, not by a Python loop per bracket.
# A string's closing quote is optional: were it required, an unterminated string
# such as "\"\"\"... would be scanned to the end again from each of its
# quotes, seconds of CPU for one 64 KB body. A body whose last string is
# unterminated is not JSON, and json.loads says so.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class ContractError(Exception):
    headers = {}  # sent with the error (Overloaded's Retry-After)

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def parse_film_id(segment):
    """Path segment -> film id; anything but ASCII digits naming an int4 is 404."""
    match = _DIGITS.fullmatch(segment)
    if not match or not 0 < int(match[1]) <= INT4_MAX:
        raise ContractError(404, FILM_NOT_FOUND)
    return int(match[1])


def parse_year(value):
    """The year.gt query value (None when absent) -> int; a non-integer is 400."""
    if value is None:
        return DEFAULT_YEAR
    match = _SIGNED_DIGITS.fullmatch(value)
    if not match or not -INT4_MAX - 1 <= int(match[1] + match[2]) <= INT4_MAX:
        raise ContractError(400, BAD_YEAR)
    return int(match[1] + match[2])


def read_body(read):
    """The request body through a sync stream's read(n). Raises ContractError
    413 once it has read one byte more than allowed, whether or not the body
    declared its Content-Length: a body's size is the first thing a POST is
    refused for, before its Idempotency-Key (docs/contract.md, "Two errors at
    once"). A chunked stream's read(n) may return less than n before the end,
    hence the loop."""
    chunks, size = [], 0
    while size <= MAX_BODY_BYTES:
        chunk = read(MAX_BODY_BYTES + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return _within_limit(b"".join(chunks))


def parse_review(body):
    """Request body bytes -> (film_id, rating).

    Raises ContractError: 413 if the body is larger than MAX_BODY_BYTES, 400
    if it is not UTF-8 JSON or nests deeper than MAX_JSON_DEPTH, 422 if it is
    JSON but not a review. Whether the film exists is checked by
    the INSERT.
    """
    try:
        text = _within_limit(body).decode("utf-8")
        if _nests_too_deep(text):
            raise ValueError("nested too deep")
        review = json.loads(text, parse_constant=_reject_constant)
    except ValueError:  # includes UnicodeDecodeError and JSONDecodeError
        raise ContractError(400, BAD_JSON) from None
    if not isinstance(review, dict):
        raise ContractError(422, NOT_AN_OBJECT)
    film_id, rating = review.get("film_id"), review.get("rating")
    if not _is_int(film_id):
        raise ContractError(422, BAD_FILM_ID)
    if not _is_int(rating) or not 1 <= rating <= 5:
        raise ContractError(422, BAD_RATING)
    if not 0 < film_id <= INT4_MAX:
        raise ContractError(422, UNKNOWN_FILM)
    return film_id, rating


def allow_header(methods):
    """The Allow header's value, in one order: the frameworks collect a route's
    methods in a set, whose order changes with each process's hash seed."""
    return ", ".join(sorted(method.strip() for method in methods))


def unavailable(sqlstate):
    """Whether a database error's SQLSTATE (None if it has none) is a 503."""
    return (sqlstate or "").startswith(UNAVAILABLE_SQLSTATES)


def parse_idempotency_key(values):
    """The Idempotency-Key header's values (an empty list when it is absent)
    -> the key, or None. Leading and trailing spaces and tabs are not part of
    it (RFC 9110 5.5: optional whitespace around a field value; gunicorn strips
    them, uvicorn and Sanic do not). 400 unless it is then one header of 1 to
    MAX_IDEMPOTENCY_KEY visible ASCII characters other than a comma. The key is
    opaque: a draft-style quoted string ("...") is a key, quotes included."""
    if not values:
        return None
    key = values[0].strip(_OWS)
    if len(values) > 1 or not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ContractError(400, BAD_IDEMPOTENCY_KEY)
    return key


def check_replay(review, film_id, rating):
    """review: the row stored under the request's Idempotency-Key. 422 if it
    is not the review this request asks for: the key was used for another."""
    if (review["film_id"], review["rating"]) != (film_id, rating):
        raise ContractError(422, IDEMPOTENCY_KEY_REUSED)


def _within_limit(body):
    if len(body) > MAX_BODY_BYTES:
        raise ContractError(413, BODY_TOO_LARGE)
    return body


def _nests_too_deep(text):
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depths = itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets))
    return max(depths, default=0) > MAX_JSON_DEPTH


def _is_int(value):
    # bool is a subclass of int, but true is not a film id.
    return isinstance(value, int) and not isinstance(value, bool)


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")
