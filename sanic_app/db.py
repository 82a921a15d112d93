"""The connection pool: opened when a worker starts serving, closed when it stops."""

from common.async_pool_wrapper import PoolWrapper
from common.async_views import finishing


def init_app(app, settings):
    # asyncpg's pool belongs to the event loop it was opened on: the server's,
    # which runs from before_server_start to after_server_stop, not create_app's.
    app.ctx.pool = PoolWrapper.from_settings(settings)
    app.before_server_start(open_pool)
    app.after_server_stop(close_pool)


async def open_pool(app):
    await app.ctx.pool.open()


async def close_pool(app):
    await app.ctx.pool.close()


def acquire(request):
    """A pooled connection; TimeoutError after POOL_TIMEOUT seconds without a
    free one. Each statement outside a transaction block commits by itself
    (common/: both PoolWrappers): the reads need no transaction, nor does the
    write, one statement (reviews.py)."""
    return request.app.ctx.pool.acquire()


finished = finishing()  # each view runs to its end; Sanic has read the body by then
