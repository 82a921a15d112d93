"""The rating sources' HTTP client: one per worker process, opened when it
starts serving, closed when it stops (as the pool: db.py)."""

import aiohttp

from common.ratings import Sources, session_options


def init_app(app, settings):
    # A ClientSession's connections belong to the event loop that opened them:
    # the server's, which runs from before_server_start to after_server_stop.
    async def open_client(app):
        client = aiohttp.ClientSession(**session_options(settings))
        app.ctx.sources = Sources(client, settings.upstream_fanout, settings.upstream_timeout)

    async def close_client(app):
        await app.ctx.sources.client.close()

    app.before_server_start(open_client)
    app.after_server_stop(close_client)


def sources(request):
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return request.app.ctx.sources
