"""The rating sources' HTTP client: one per worker process, opened when it
starts serving, closed when it stops (as the pool: db.py)."""

import httpx

from common.ratings import Sources, client_options


def init_app(app, settings):
    # An AsyncClient's connections belong to the event loop that opened them:
    # the server's, which runs from before_server_start to after_server_stop.
    async def open_client(app):
        client = httpx.AsyncClient(**client_options(settings))
        app.ctx.sources = Sources(client, settings.upstream_fanout, settings.upstream_timeout)

    async def close_client(app):
        await app.ctx.sources.client.aclose()

    app.before_server_start(open_client)
    app.after_server_stop(close_client)


def sources(request):
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return request.app.ctx.sources
