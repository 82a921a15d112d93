"""Every error as JSON {"error": message}, the same in all four apps."""

import traceback

import falcon

from common.contract import (
    BODY_TOO_LARGE,
    DATABASE_UNAVAILABLE,
    INTERNAL_ERROR,
    MAX_BODY_BYTES,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    REQUEST_TIMEOUT,
    ContractError,
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
    app.add_middleware(ContractChecks())
    app.add_error_handler(ContractError, contract_error)
    app.set_error_serializer(http_error)
    app.add_error_handler(DATABASE_ERRORS, database_error)


class ContractChecks:
    """Middleware: the checks no resource makes, before and after routing."""

    def process_request(self, req, resp):
        """413 for a declared oversized body on any route, even one that never reads it.

        404 for an empty path segment: once Falcon has stripped one trailing slash,
        /films// would route to /films/{film_id} with the film_id "".
        """
        if (req.content_length or 0) > MAX_BODY_BYTES:
            raise ContractError(413, BODY_TOO_LARGE)
        if "//" in req.env["PATH_INFO"]:
            raise falcon.HTTPRouteNotFound()

    def process_resource(self, req, resp, resource, params):
        """A method Falcon does not know (PURGE, say) is a 405 like any other, not 400."""
        if req.method not in falcon.COMBINED_METHODS:
            resource.on_request(req, resp, **params)


def method_not_allowed(*allowed):
    """A resource's on_request and on_options: 405 with exactly `allowed` in Allow.

    Falcon would answer OPTIONS itself (200), and list OPTIONS in its own 405s.
    """

    def on_request(resource, req, resp, **params):
        raise falcon.HTTPMethodNotAllowed(sorted(allowed))  # as allow_header orders it

    return on_request


def contract_error(req, resp, exception, params):
    error(resp, exception.status, exception.message)
    resp.set_headers(exception.headers)


def http_error(req, resp, exception):
    """Falcon's own errors (404, 405, ...), keeping their headers (Allow): the
    error serializer, so that none has Falcon's {"title", "description"} shape."""
    message = exception.description or exception.title
    error(resp, exception.status_code, MESSAGES.get(exception.status_code, message))


def database_error(req, resp, exception, params):
    """503 if the database cannot serve this now (the PoolWrapper knows its
    driver's errors: no free connection in time, a lost connection, a SQLSTATE
    that says so), else a 500 like any other error, logged as Falcon's own
    handler logs one (re-raised, it would leave Falcon's app)."""
    if unavailable(exception):
        return error(resp, 503, DATABASE_UNAVAILABLE)
    req.log_error(traceback.format_exc())
    raise falcon.HTTPInternalServerError()


def error(resp, status, message):
    resp.status = status
    resp.media = {"error": message}
