"""uvicorn's HTTP protocol for Quart, with admission before the request is
parsed (quart_app/serve.sh: --http common.uvicorn_protocol:Admitting).

Past capacity an event loop reads every request it is sent: at four times
Quart's capacity, a refusal through uvicorn's request cycle and an ASGI
middleware (common/asgi.py's admitting) cost so much of the loop that it
answered 3 % of its capacity in time. While the app's gate refuses
newcomers (common/admission.py, Gate.refuses), a plain GET that arrives whole
between two requests is answered the contract's 503 from the bytes read,
with no parser callback, no task and no ASGI message, and the connection is
kept; anything else goes the usual way, where the middleware admits or
refuses it.
"""

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from common import admission
from common.asgi import Admitting as AdmittingApp


class Admitting(HttpToolsProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = gate_of(self.app)
        self.in_message = False  # the parser is inside a request

    def data_received(self, data):
        if self.gate is not None and self.between_requests() and self.gate.refuses():
            if admission.plain_get(data):
                return self.refuse()
        super().data_received(data)

    def between_requests(self):
        return (
            not self.in_message
            and not self.pipeline
            and (self.cycle is None or self.cycle.response_complete)
        )

    def refuse(self):
        """The 503 written at once; the connection kept for the next request,
        its keep-alive timeout set again (as on_response_complete does)."""
        self._unset_keepalive_if_required()
        self.transport.write(admission.KEPT_ALIVE)
        self.server_state.total_requests += 1
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def on_message_begin(self):
        self.in_message = True
        super().on_message_begin()

    def on_message_complete(self):
        self.in_message = False
        super().on_message_complete()


def gate_of(app):
    """The Gate of the app uvicorn serves: its AdmittingApp, inside uvicorn's
    own middleware (each keeps the next as .app) and Quart's (.asgi_app);
    None if it has none."""
    while app is not None and not isinstance(app, AdmittingApp):
        app = getattr(app, "app", None) or getattr(app, "asgi_app", None)
    return app and app.gate
