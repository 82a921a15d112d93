"""What the sync apps (flask_app, falcon_app) need of WSGI under gunicorn,
once: the body read to the contract's limits, gunicorn's parser errors
included, and Flask's WSGI middleware for Upgrade. Each app imports one name
where it used to keep a handler of its own; the async apps' servers read the
body before the app does (common/asgi.py is their twin)."""

from gunicorn.http.errors import NoMoreData, ParseException

from common import contract


def read_body(read):
    """contract.read_body through a WSGI stream's read(n): 413 past
    MAX_BODY_BYTES. gunicorn parses a chunked body as the view reads it: a bad
    chunk size or terminator (ParseException), or a body that ends early
    (NoMoreData), is raised from read(). The client's fault: the contract's
    400, not a 500."""
    try:
        return contract.read_body(read)
    except (ParseException, NoMoreData):
        raise contract.ContractError(400, contract.MALFORMED_REQUEST) from None


def ignore_upgrade(wsgi_app):
    """A GET with `Upgrade: websocket` is served as the plain GET it also is
    (RFC 9110, 7.8: a server may ignore Upgrade). Werkzeug would match it
    against WebSocket routes only, and answer 400 for want of one (Flask's:
    Falcon ignores the field)."""

    def plain_http(environ, start_response):
        environ.pop("HTTP_UPGRADE", None)
        return wsgi_app(environ, start_response)

    return plain_http
