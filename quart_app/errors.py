"""Every error as JSON {"error": message}, the same in all four apps."""

from quart import jsonify, request
from werkzeug.exceptions import HTTPException

from common.async_pool_wrapper import DATABASE_ERRORS, unavailable
from common.contract import (
    BODY_TOO_LARGE,
    DATABASE_UNAVAILABLE,
    INTERNAL_ERROR,
    MAX_BODY_BYTES,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    REQUEST_TIMEOUT,
    ContractError,
    allow_header,
)

MESSAGES = {
    404: NOT_FOUND,
    405: METHOD_NOT_ALLOWED,
    408: REQUEST_TIMEOUT,
    413: BODY_TOO_LARGE,
    500: INTERNAL_ERROR,
}


# Every hook is a coroutine function: Quart runs a plain function in a thread.
def init_app(app):
    app.before_request(refuse_before_routing)
    app.register_error_handler(ContractError, contract_error)
    app.register_error_handler(HTTPException, http_error)
    for exception in DATABASE_ERRORS:
        app.register_error_handler(exception, database_error)


async def refuse_before_routing():
    """What the contract refuses whatever the route: a declared oversized body
    (413, even where the body is never read) and an empty path segment (404:
    Werkzeug drops leading slashes, so //films/995/ would find film 995)."""
    if (request.content_length or 0) > MAX_BODY_BYTES:
        return error(413, BODY_TOO_LARGE)
    if "//" in request.scope["path"]:
        return error(404, NOT_FOUND)


async def contract_error(exception):
    response = error(exception.status, exception.message)
    response.headers.update(exception.headers)
    return response


async def http_error(exception):
    """Quart's own errors (404, 405, 413, ...), keeping their headers (Allow)."""
    response = error(exception.code, MESSAGES.get(exception.code, exception.description))
    for name, value in exception.get_headers():
        if name == "Allow":
            value = allow_header(value.split(","))
        if name != "Content-Type":
            response.headers[name] = value
    return response


async def database_error(exception):
    """503 if the database cannot serve this now (the PoolWrapper knows its
    driver's errors: no free connection in time, a lost connection, a SQLSTATE
    that says so), else a 500 like any other error, logged by Quart."""
    if unavailable(exception):
        return error(503, DATABASE_UNAVAILABLE)
    raise exception


def error(status, message):
    response = jsonify(error=message)
    response.status_code = status
    return response
