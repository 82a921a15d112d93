"""What the async apps' ASGI server lets through and the contract refuses, as
ASGI middleware, once (common/wsgi.py is the sync apps' twin); and admission
before the framework. Quart is served by uvicorn (quart_app/serve.sh); Sanic,
by its own server, does the same in its errors.py and its handle_request."""

import json

from common import admission
from common.contract import MALFORMED_REQUEST

# As Quart's jsonify sends it.
MALFORMED = (json.dumps({"error": MALFORMED_REQUEST}, separators=(",", ":")) + "\n").encode()


def refuse_two_hosts(asgi_app):
    """A request with a second Host field is the contract's 400, as gunicorn
    answers it (RFC 9112 3.2): uvicorn passes it on."""

    async def one_host(scope, receive, send):
        if scope["type"] == "http" and [name for name, _ in scope["headers"]].count(b"host") > 1:
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(MALFORMED)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": MALFORMED})
            return
        await asgi_app(scope, receive, send)

    return one_host


REFUSAL_START = {
    "type": "http.response.start",
    "status": 503,
    "headers": [
        (name.lower().encode(), value.encode()) for name, value in admission.REFUSAL_FIELDS
    ],
}
REFUSAL_BODY = {"type": "http.response.body", "body": admission.REFUSAL}


class Admitting:
    """ASGI middleware: each HTTP request admitted by gate (common/admission.py's
    Gate) before the app sees it, or refused: the contract's 503 as canned
    messages, at a small share of an answer's cost (no routing, no request
    object). uvicorn's protocol (common/uvicorn_protocol.py) finds the gate
    here, to refuse a plain GET before it parses it."""

    def __init__(self, app, gate):
        self.app = app
        self.gate = gate

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        ticket = self.gate.admit(scope["path"])
        if ticket is None:
            await send(REFUSAL_START)
            await send(REFUSAL_BODY)
            return

        async def answering(message):
            # Answered once its last byte is sent: Quart tears the request
            # down over a few turns of the loop after, while its client may
            # already ask again.
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                ticket.answered()

        try:
            await self.app(scope, receive, answering)
        finally:
            ticket.answered()
