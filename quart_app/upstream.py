"""The rating sources' HTTP client: one per worker process, opened when it
starts serving, closed when it stops (as the pool: db.py)."""

import aiohttp
from quart import current_app

from common.ratings import Sources, session_options


def init_app(app, settings):
    # A ClientSession's connections belong to the event loop that opened them:
    # the server's, which runs from before_serving to after_serving.
    async def open_client():
        client = aiohttp.ClientSession(**session_options(settings))
        sources = Sources(client, settings.upstream_fanout, settings.upstream_timeout)
        app.extensions["sources"] = sources

    async def close_client():
        await app.extensions["sources"].client.close()

    app.before_serving(open_client)
    app.after_serving(close_client)


def sources():
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return current_app.extensions["sources"]
