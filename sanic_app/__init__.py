"""The films/reviews API on Sanic + asyncpg.

Sanic's own server builds one app per worker process:
'sanic sanic_app:create_app --factory' (see serve.sh).
"""

import time
from urllib.parse import unquote

from sanic import Request, Sanic
from sanic.exceptions import BadURL
from sanic.http import Stage
from sanic.server.protocols.http_protocol import HttpProtocol

from common import sanic_manager
from common.admission import KEPT_ALIVE, Gate, Overloaded, plain_get
from common.contract import MAX_BODY_BYTES
from common.settings import Settings

from . import db, errors, films, health, ratings, reviews, upstream

# The method of the request Sanic builds to answer an error that came before it
# had a request (sanic/http/http1.py, create_empty_request).
STAND_IN = "NONE"

# Sanic's manager (it imports this module) stops its workers outside its
# signal handler, once they serve: common/sanic_manager.py.
sanic_manager.stop_outside_signal_handler()


def create_app(*, settings=None):
    """Application factory; settings default to the environment's.

    Keyword-only: sanic --factory passes its command-line arguments to a
    factory that takes a positional argument.
    """
    settings = settings or Settings.from_env()
    # The contract: one trailing slash is optional, and never a redirect. Routes
    # are declared without it; strict_slashes=False accepts it.
    app = Admitting(__name__, strict_slashes=False, request_class=DecodedPathRequest)
    # Past capacity, a new request is refused before Sanic routes it
    # (common/admission.py).
    app.ctx.gate = Gate(settings.queue_budget, settings.pool_max_size)
    # Sanic's own limit (100 MB by default) as the contract's 413, chunked bodies too.
    app.config.REQUEST_MAX_SIZE = MAX_BODY_BYTES
    db.init_app(app, settings)
    upstream.init_app(app, settings)
    errors.init_app(app)
    finish_on_shutdown(app)
    app.blueprint(films.blueprint)
    app.blueprint(ratings.blueprint)
    app.blueprint(reviews.blueprint)
    app.blueprint(health.blueprint)
    return app


def finish_on_shutdown(app):
    """On SIGTERM each worker closes its idle connections once, then waits up to
    GRACEFUL_SHUTDOWN_TIMEOUT for the busy ones, while their keep-alive clients
    keep sending requests, and at the deadline aborts what is in flight (reviews
    stored, never answered). From the first shutdown listener on, every response
    says Connection: close, so that each connection ends with the request it is
    serving, as under gunicorn and uvicorn."""
    app.ctx.stopping = False

    @app.before_server_stop
    async def stopping(app):
        app.ctx.stopping = True

    @app.on_response
    async def last_response(request, response):
        if request.app.ctx.stopping:
            request.stream.keep_alive = False


class Admitting(Sanic):
    """Sanic, each request admitted by its Gate (common/admission.py) before
    Sanic routes it, or refused: the contract's 503, with no routing, no
    middleware, no handler (Sanic's server calls handle_request for each
    request it has parsed)."""

    def prepare(self, *args, protocol=None, **kwargs):
        """Sanic's command line prepares the server: with Admitting's protocol."""
        super().prepare(*args, protocol=protocol or AdmittingProtocol, **kwargs)

    async def handle_request(self, request):
        ticket = self.ctx.gate.admit(request.path)
        if ticket is None:
            response = await request.respond(errors.contract_error(request, Overloaded()))
            await response.send(end_stream=True)
            return
        try:
            await super().handle_request(request)
        finally:
            ticket.answered()


class AdmittingProtocol(HttpProtocol):
    """Sanic's HTTP protocol, refusing before it parses a request: while the
    app's gate refuses newcomers, a plain GET that arrives whole between two
    requests is answered the contract's 503 from the bytes read, with no
    parsing, no request object and no wake-up of the connection's task, and
    the connection is kept; anything else goes the usual way, to
    handle_request (common/admission.py; Quart's twin is
    common/uvicorn_protocol.py)."""

    def data_received(self, data):
        http = self.http  # None until the connection's task has started
        if (
            http is not None
            and not self.recv_buffer
            and http.stage is Stage.IDLE
            and not http.request_body
            and self.app.ctx.gate.refuses()
            and plain_get(data)
        ):
            self._time = time.monotonic()  # Sanic's clock: the keep-alive timeout from now
            self.transport.write(KEPT_ALIVE)
            return
        super().data_received(data)


class DecodedPathRequest(Request):
    """Routes on the percent-decoded path, as WSGI's PATH_INFO and ASGI's path
    are: /%66ilms/995 is /films/995 and %2F is a slash. Sanic routes on the raw
    path, where a %2F would be part of a segment."""

    def __init__(self, url_bytes, *args, **kwargs):
        try:
            super().__init__(url_bytes, *args, **kwargs)
        except BadURL:
            if kwargs.get("method") != STAND_IN:  # given by keyword there
                raise
            # A request target httptools cannot parse (x:80, films/995, a
            # control character) is a 400, answered on a stand-in request that
            # Sanic builds from the same target: it would fail again and drop
            # the connection unanswered.
            super().__init__(b"/", *args, **kwargs)

    @property
    def path(self):
        # An absolute-form target with no path (GET http://x) has none: it is
        # "/" (RFC 9110 4.2.3), as gunicorn takes it.
        return unquote(super().path) if self._parsed_url.path else "/"
