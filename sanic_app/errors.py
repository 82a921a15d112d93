"""Every error as JSON {"error": message}, the same in all four apps."""

import asyncpg
from sanic import json
from sanic.exceptions import SanicException, ServerError

from common.contract import (
    BODY_TOO_LARGE,
    DATABASE_UNAVAILABLE,
    HEADERS_TOO_LARGE,
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
}
# Sanic refuses a request head larger than Http.HEADER_MAX_SIZE with a 413 and
# this message; the contract's status for it, as gunicorn's, is 431.
SANIC_HEADER_TOO_LARGE = "Request header exceeds the size limit"
# Sanic reads a body before the handler runs, under RESPONSE_TIMEOUT (60 s), and
# answers 503 with this message when it does not arrive in time. The handlers'
# own waits are bounded far below (POOL_TIMEOUT, DATABASE_TIMEOUT): this is a
# client's stalled body, the contract's 408 (as Quart's BODY_TIMEOUT).
SANIC_RESPONSE_TIMEOUT = "Response Timeout"

# No free connection in time (TimeoutError), or what psycopg2 calls
# OperationalError in asyncpg's words: the SQLSTATE classes 08, 53, 55, 57 and
# 58 (no connection, out of resources, database not accepting connections,
# shutting down, system error), a refused socket, and what asyncpg raises about
# a connection Postgres dropped: lost mid-query (ConnectionDoesNotExistError),
# closed under a transaction block (InterfaceError), left busy by a cancelled
# operation (InternalClientError: "cannot switch to state ..."). A write that
# failed so was not committed: its transaction rolls back with the connection.
UNAVAILABLE = (
    TimeoutError,
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InsufficientResourcesError,
    asyncpg.ObjectNotInPrerequisiteStateError,
    asyncpg.OperatorInterventionError,
    asyncpg.PostgresSystemError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
)


def init_app(app):
    app.on_request(refuse_before_routing)
    app.error_handler.add(ContractError, contract_error)
    # For every other exception: Sanic's own JSON errors are {"description",
    # "status", "message"}, and its default (FALLBACK_ERROR_FORMAT "auto") is
    # HTML for a browser.
    app.error_handler.add(Exception, http_error)
    for exception in UNAVAILABLE:
        app.error_handler.add(exception, database_unavailable)


def refuse_before_routing(request):
    """What the contract refuses whatever the route: a declared oversized body
    (413, even where the body is never read) and an empty path segment (404:
    with strict_slashes=False, Sanic would find film 995 at /films/995//).
    Sanic runs this middleware for unrouted requests too, before their 404."""
    if int(request.headers.get("content-length", 0)) > MAX_BODY_BYTES:
        return error(413, BODY_TOO_LARGE)
    if "//" in request.path:
        return error(404, NOT_FOUND)


def contract_error(request, exception):
    return error(exception.status, exception.message)


def http_error(request, exception):
    """Sanic's own errors (404, 405, 413, 400, ...), keeping their headers (Allow),
    and any other exception as a 500, logged as Sanic's default handler does."""
    request.app.error_handler.log(request, exception)
    if not isinstance(exception, SanicException):
        exception = ServerError()
    status = exception.status_code
    if exception.message == SANIC_HEADER_TOO_LARGE:
        return error(431, HEADERS_TOO_LARGE)
    if exception.message == SANIC_RESPONSE_TIMEOUT:
        return error(408, REQUEST_TIMEOUT)
    response = error(status, MESSAGES.get(status, exception.message))
    response.headers.update(exception.headers)
    if "allow" in response.headers:
        response.headers["allow"] = allow_header(response.headers["allow"].split(","))
    return response


def database_unavailable(request, exception):
    """The pool had no free connection in time, or Postgres did not answer."""
    return error(503, DATABASE_UNAVAILABLE)


def error(status, message):
    return json({"error": message}, status=status)
