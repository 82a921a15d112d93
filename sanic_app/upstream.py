"""The rating sources' HTTP client: one per worker process, opened and closed
as the pool is (db.py)."""

from common.async_sources import Sources


def init_app(app, settings):
    app.ctx.sources = Sources(settings)
    app.before_server_start(open_sources)
    app.after_server_stop(close_sources)


async def open_sources(app):
    await app.ctx.sources.open()


async def close_sources(app):
    await app.ctx.sources.close()


def sources(request):
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return request.app.ctx.sources
