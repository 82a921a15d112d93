"""The request corpus the HTTP suites share: every error case of the contract,
with the status and message each app must answer."""

import json

from common import contract

REVIEW = {"film_id": 995, "rating": 4}

TOO_LARGE = b"{" + b" " * contract.MAX_BODY_BYTES + b"}"

ERRORS = [
    # Paths: unknown routes, and film ids that name no film.
    ("GET", "/nope", None, 404, contract.NOT_FOUND),
    ("GET", "/", None, 404, contract.NOT_FOUND),
    ("GET", "/films/995/extra/", None, 404, contract.NOT_FOUND),
    ("GET", "/films//", None, 404, contract.NOT_FOUND),
    ("GET", "/films//995/", None, 404, contract.NOT_FOUND),
    ("GET", "/films/995//", None, 404, contract.NOT_FOUND),
    ("GET", "/health//", None, 404, contract.NOT_FOUND),
    ("GET", "//films/995/", None, 404, contract.NOT_FOUND),
    ("GET", "//health", None, 404, contract.NOT_FOUND),
    ("GET", "/reviews/995/", None, 404, contract.NOT_FOUND),
    ("GET", "/FILMS/", None, 404, contract.NOT_FOUND),
    ("GET", "/films/0/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/1001/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/2147483647/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/2147483648/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/99999999999999999999999999/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/-1/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/abc/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/1.5/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/1e3/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/%C2%B2/", None, 404, contract.FILM_NOT_FOUND),  # a superscript two
    ("GET", "/films/%20995/", None, 404, contract.FILM_NOT_FOUND),
    # A film's ratings: the film is looked up before any source is asked.
    ("GET", "/films/0/ratings/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/1001/ratings/", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films/abc/ratings", None, 404, contract.FILM_NOT_FOUND),
    ("GET", "/films//ratings/", None, 404, contract.NOT_FOUND),
    ("GET", "/films/995/ratings//", None, 404, contract.NOT_FOUND),
    ("GET", "/films/995/ratings/x/", None, 404, contract.NOT_FOUND),
    ("GET", "/films/995/rating/", None, 404, contract.NOT_FOUND),
    # Query strings.
    ("GET", "/films/?year.gt=abc", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=1.5", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=2e3", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=%202000", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=%2B2000", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=2147483648", None, 400, contract.BAD_YEAR),
    ("GET", "/films/?year.gt=99999999999999999999999", None, 400, contract.BAD_YEAR),
    # Methods.
    ("POST", "/films/", b"{}", 405, contract.METHOD_NOT_ALLOWED),
    ("DELETE", "/films/995/", None, 405, contract.METHOD_NOT_ALLOWED),
    ("PUT", "/films/abc/", None, 405, contract.METHOD_NOT_ALLOWED),
    ("POST", "/films/995/ratings/", b"{}", 405, contract.METHOD_NOT_ALLOWED),
    ("DELETE", "/films/abc/ratings", None, 405, contract.METHOD_NOT_ALLOWED),
    ("GET", "/reviews/", None, 405, contract.METHOD_NOT_ALLOWED),
    ("PATCH", "/reviews", None, 405, contract.METHOD_NOT_ALLOWED),
    ("POST", "/health", None, 405, contract.METHOD_NOT_ALLOWED),
    ("OPTIONS", "/films/", None, 405, contract.METHOD_NOT_ALLOWED),
    ("OPTIONS", "/reviews/", None, 405, contract.METHOD_NOT_ALLOWED),
    # Bodies that are not JSON.
    ("POST", "/reviews/", b"", 400, contract.BAD_JSON),
    ("POST", "/reviews/", b'{"film_id"', 400, contract.BAD_JSON),
    ("POST", "/reviews/", b"film_id=995&rating=4", 400, contract.BAD_JSON),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": NaN}', 400, contract.BAD_JSON),
    ("POST", "/reviews/", b'{"film_id": Infinity, "rating": 4}', 400, contract.BAD_JSON),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": "\xff"}', 400, contract.BAD_JSON),
    ("POST", "/reviews/", json.dumps(REVIEW).encode("utf-16"), 400, contract.BAD_JSON),
    (
        "POST",
        "/reviews/",
        b'{"film_id": ' + b"9" * 5000 + b', "rating": 4}',
        400,
        contract.BAD_JSON,
    ),
    # JSON that is not a review.
    ("POST", "/reviews/", b"[]", 422, contract.NOT_AN_OBJECT),
    ("POST", "/reviews/", b'"review"', 422, contract.NOT_AN_OBJECT),
    ("POST", "/reviews/", b"null", 422, contract.NOT_AN_OBJECT),
    ("POST", "/reviews/", b"4", 422, contract.NOT_AN_OBJECT),
    ("POST", "/reviews/", b"{}", 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"rating": 4}', 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"film_id": "995", "rating": 4}', 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"film_id": true, "rating": 4}', 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"film_id": 995.0, "rating": 4}', 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"film_id": null, "rating": 4}', 422, contract.BAD_FILM_ID),
    ("POST", "/reviews/", b'{"film_id": 995}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": 0}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": 6}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": 4.5}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": 4.0}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": true}', 422, contract.BAD_RATING),
    ("POST", "/reviews/", b'{"film_id": 995, "rating": "4"}', 422, contract.BAD_RATING),
    (
        "POST",
        "/reviews/",
        b'{"film_id": 995, "rating": 99999999999999999999}',
        422,
        contract.BAD_RATING,
    ),
    ("POST", "/reviews/", b'{"film_id": 1001, "rating": 4}', 422, contract.UNKNOWN_FILM),
    ("POST", "/reviews/", b'{"film_id": 0, "rating": 4}', 422, contract.UNKNOWN_FILM),
    ("POST", "/reviews/", b'{"film_id": -995, "rating": 4}', 422, contract.UNKNOWN_FILM),
    ("POST", "/reviews/", b'{"film_id": 2147483648, "rating": 4}', 422, contract.UNKNOWN_FILM),
    (
        "POST",
        "/reviews/",
        b'{"film_id": 99999999999999999999, "rating": 4}',
        422,
        contract.UNKNOWN_FILM,
    ),
    # Bodies too large, declared by Content-Length, on any route.
    ("POST", "/reviews/", TOO_LARGE, 413, contract.BODY_TOO_LARGE),
    ("GET", "/films/", TOO_LARGE, 413, contract.BODY_TOO_LARGE),
    ("POST", "/nope", TOO_LARGE, 413, contract.BODY_TOO_LARGE),
    ("POST", "//reviews/", TOO_LARGE, 413, contract.BODY_TOO_LARGE),
]


# Two errors at once in a POST /reviews/: the body's size first (413), then the
# Idempotency-Key (400), then the body's content (400, 422), whatever the order
# a framework reads them in (docs/contract.md, "Two errors at once"). The
# Idempotency-Key sent, the body (a list is sent chunked, one chunk per item:
# over HTTP only), the status and message.
MALFORMED_KEY = "a b"
PRECEDENCE = [
    (MALFORMED_KEY, TOO_LARGE, 413, contract.BODY_TOO_LARGE),
    (MALFORMED_KEY, [b'{"film_id": 995, "rating": 4, "pad": "', TOO_LARGE, b'"}'], 413,
     contract.BODY_TOO_LARGE),
    (MALFORMED_KEY, b"not json", 400, contract.BAD_IDEMPOTENCY_KEY),
    (MALFORMED_KEY, b"[]", 400, contract.BAD_IDEMPOTENCY_KEY),
    (MALFORMED_KEY, b'{"film_id": 1001, "rating": 4}', 400, contract.BAD_IDEMPOTENCY_KEY),
    (MALFORMED_KEY, json.dumps(REVIEW).encode(), 400, contract.BAD_IDEMPOTENCY_KEY),
    ("k", b"not json", 400, contract.BAD_JSON),
    ("k", b'{"film_id": 1001, "rating": 4}', 422, contract.UNKNOWN_FILM),
]  # fmt: skip
PRECEDENCE_IDS = ["declared-413", "chunked-413", "not-json", "not-a-review", "unknown-film",
                  "review", "key-then-not-json", "key-then-unknown-film"]  # fmt: skip

# Spaces and tabs around an Idempotency-Key are not part of it (RFC 9110 5.5):
# each of these is the key "k-1". Sent raw: HTTP clients refuse them.
PADDED_KEYS = [" k-1", "k-1 ", "\tk-1", "k-1\t", " \t k-1 \t "]
PADDED_KEY_IDS = ["space", "trailing-space", "tab", "trailing-tab", "both"]

# What a JSON scanner finds hardest, as fragments: quotes, escapes, brackets,
# separators, numbers' characters, multi-byte and control characters. A body
# of one or two of them repeated to the limit is the adversarial input of
# tests/contract/test_contract_rules.py (every pair, in process) and of
# tests/contract/test_request_cost.py (the costliest, sent to every app).
FRAGMENTS = ['"', "\\", '\\"', "\\\\", "[", "]", "{", "}", ",", ":", '"a":', "1", "-", "e", " ",
             "\n", "\\u", "\\ud800", "\u00e9", "null", "\x00"]  # fmt: skip


def filled(unit, prefix=""):
    """prefix, then unit repeated: exactly MAX_BODY_BYTES bytes of it."""
    times = contract.MAX_BODY_BYTES // len(unit.encode()) + 1
    return (prefix + unit * times).encode()[: contract.MAX_BODY_BYTES]
