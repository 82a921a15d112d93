"""Every error as JSON {"error": message}, the same in all four apps."""

import re

from sanic import json
from sanic.exceptions import PayloadTooLarge, SanicException, ServerError, ServiceUnavailable

from common.async_pool_wrapper import DATABASE_ERRORS, unavailable
from common.contract import (
    BODY_TOO_LARGE,
    DATABASE_UNAVAILABLE,
    EXPECTATION_FAILED,
    HEADERS_TOO_LARGE,
    INTERNAL_ERROR,
    MALFORMED_REQUEST,
    MAX_BODY_BYTES,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    REQUEST_TIMEOUT,
    ContractError,
    allow_header,
)

# Sanic's own 400s are its parser's (bad framing, bad Content-Length): the app's
# 400s are ContractErrors.
MESSAGES = {
    400: MALFORMED_REQUEST,
    404: NOT_FOUND,
    405: METHOD_NOT_ALLOWED,
    408: REQUEST_TIMEOUT,
    413: BODY_TOO_LARGE,
    417: EXPECTATION_FAILED,
    500: INTERNAL_ERROR,
}
# What gunicorn and uvicorn refuse with a 400 and Sanic's parser lets through
# (RFC 9110 5.1, 5.5, 9.1): a method that is not an upper-case token, a field
# name that is not a token (a space, "@", a control character, nothing), a
# field value with NUL, CR or LF in it; and, as gunicorn, a second Host field
# (RFC 9112 3.2).
METHOD = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Z]+")
FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9a-z]+")  # Sanic lower-cases names
FIELD_VALUE_FORBIDDEN = re.compile(r"[\x00\r\n]")


def init_app(app):
    app.on_request(refuse_before_routing)
    app.error_handler.add(ContractError, contract_error)
    # For every other exception: Sanic's own JSON errors are {"description",
    # "status", "message"}, and its default (FALLBACK_ERROR_FORMAT "auto") is
    # HTML for a browser.
    app.error_handler.add(Exception, http_error)
    for exception in DATABASE_ERRORS:
        app.error_handler.add(exception, database_error)


def refuse_before_routing(request):
    """What the contract refuses whatever the route: a request the other
    servers' parsers refuse (400, see METHOD), a declared oversized body
    (413, even where the body is never read) and an empty path segment (404:
    with strict_slashes=False, Sanic would find film 995 at /films/995//).
    Sanic runs this middleware for unrouted requests too, before their 404."""
    if not well_formed(request):
        return error(400, MALFORMED_REQUEST)
    if int(request.headers.get("content-length", 0)) > MAX_BODY_BYTES:
        return error(413, BODY_TOO_LARGE)
    if "//" in request.path:
        return error(404, NOT_FOUND)


def well_formed(request):
    return (
        METHOD.fullmatch(request.method)
        and len(request.headers.getall("host", [])) <= 1
        and all(
            FIELD_NAME.fullmatch(name) and not FIELD_VALUE_FORBIDDEN.search(value)
            for name, value in request.headers.items()
        )
    )


def contract_error(request, exception):
    response = error(exception.status, exception.message)
    response.headers.update(exception.headers)
    return response


def http_error(request, exception):
    """Sanic's own errors (404, 405, 413, 400, ...), keeping their headers (Allow),
    and any other exception as a 500, logged as Sanic's default handler does."""
    request.app.error_handler.log(request, exception)
    if not isinstance(exception, SanicException):
        exception = ServerError()
    status = exception.status_code
    # A head larger than Http.HEADER_MAX_SIZE: Sanic raises its 413 before it
    # has a request, and answers on a stand-in that has no head. The contract's
    # status for it, as gunicorn's, is 431.
    if isinstance(exception, PayloadTooLarge) and not request.head:
        return error(431, HEADERS_TOO_LARGE)
    # Sanic's only 503 of its own: a body that did not arrive within
    # RESPONSE_TIMEOUT (60 s); the handlers' own waits are bounded far below
    # (POOL_TIMEOUT, DATABASE_TIMEOUT). A client's stalled body: the contract's
    # 408, as Quart's BODY_TIMEOUT.
    if isinstance(exception, ServiceUnavailable):
        return error(408, REQUEST_TIMEOUT)
    response = error(status, MESSAGES.get(status, exception.message))
    response.headers.update(exception.headers)
    if "allow" in response.headers:
        response.headers["allow"] = allow_header(response.headers["allow"].split(","))
    return response


def database_error(request, exception):
    """503 if the database cannot serve this now (the PoolWrapper knows its
    driver's errors: no free connection in time, a lost connection, a SQLSTATE
    that says so), else a 500 like any other error, logged."""
    if unavailable(exception):
        return error(503, DATABASE_UNAVAILABLE)
    return http_error(request, exception)


def error(status, message):
    return json({"error": message}, status=status)
