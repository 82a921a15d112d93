"""What the async apps' ASGI server lets through and the contract refuses, as
ASGI middleware, once (common/wsgi.py is the sync apps' twin). Quart is served
by uvicorn (quart_app/serve.sh); Sanic, by its own server, checks the same in
its errors.py."""

import json

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
