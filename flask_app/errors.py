"""Every error as JSON {"error": message}, the same in all four apps."""

from flask import jsonify, request
from gunicorn.http.errors import NoMoreData, ParseException
from werkzeug.exceptions import HTTPException

from common.contract import (
    BODY_TOO_LARGE,
    DATABASE_UNAVAILABLE,
    INTERNAL_ERROR,
    MALFORMED_REQUEST,
    MAX_BODY_BYTES,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    REQUEST_TIMEOUT,
    ContractError,
    allow_header,
)
from common.pool_wrapper import DATABASE_ERRORS, unavailable

MESSAGES = {
    404: NOT_FOUND,
    405: METHOD_NOT_ALLOWED,
    408: REQUEST_TIMEOUT,
    413: BODY_TOO_LARGE,
    500: INTERNAL_ERROR,
}


def init_app(app):
    app.before_request(refuse_before_routing)
    app.register_error_handler(ContractError, contract_error)
    app.register_error_handler(HTTPException, http_error)
    for exception in DATABASE_ERRORS:
        app.register_error_handler(exception, database_error)
    app.register_error_handler(ParseException, malformed_request)
    app.register_error_handler(NoMoreData, malformed_request)


def refuse_before_routing():
    """What the contract refuses whatever the route: a declared oversized body
    (413, even where the body is never read) and an empty path segment (404:
    Werkzeug drops leading slashes, so //films/995/ would find film 995)."""
    if (request.content_length or 0) > MAX_BODY_BYTES:
        return error(413, BODY_TOO_LARGE)
    if "//" in request.environ["PATH_INFO"]:
        return error(404, NOT_FOUND)


def contract_error(exception):
    return error(exception.status, exception.message)


def http_error(exception):
    """Flask's own errors (404, 405, 413, ...), keeping their headers (Allow)."""
    response = error(exception.code, MESSAGES.get(exception.code, exception.description))
    for name, value in exception.get_headers():
        if name == "Allow":
            value = allow_header(value.split(","))
        if name != "Content-Type":
            response.headers[name] = value
    return response


def malformed_request(exception):
    """gunicorn parses a chunked body as the view reads it: a bad chunk size or
    terminator (ParseException), or a body that ends early (NoMoreData), is
    raised from request.stream.read. The client's fault: 400, not a 500."""
    return error(400, MALFORMED_REQUEST)


def database_error(exception):
    """503 if the database cannot serve this now (the PoolWrapper knows its
    driver's errors: no free connection in time, a lost connection, a SQLSTATE
    that says so), else a 500 like any other error, logged by Flask."""
    if unavailable(exception):
        return error(503, DATABASE_UNAVAILABLE)
    raise exception


def error(status, message):
    response = jsonify(error=message)
    response.status_code = status
    return response
