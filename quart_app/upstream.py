"""The rating sources' HTTP client: one per worker process, opened when it
starts serving, closed when it stops (as the pool: db.py)."""

import httpx
from quart import current_app

from common.ratings import Sources, client_options


def init_app(app, settings):
    # An AsyncClient's connections belong to the event loop that opened them:
    # the server's, which runs from before_serving to after_serving.
    async def open_client():
        client = httpx.AsyncClient(**client_options(settings))
        sources = Sources(client, settings.upstream_fanout, settings.upstream_timeout)
        app.extensions["sources"] = sources

    async def close_client():
        await app.extensions["sources"].client.aclose()

    app.before_serving(open_client)
    app.after_serving(close_client)


def sources():
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return current_app.extensions["sources"]
