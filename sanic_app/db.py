"""The connection pool: opened when a worker starts serving, closed when it stops."""

import functools

from common.async_pool_wrapper import PoolWrapper
from common.async_views import shielded


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


def finished(view):
    """The view, run to its end even if its client goes away first
    (common/async_views.py says why). Sanic has read the body before it calls
    the view: a client that leaves before sending all of it never reaches here."""

    @functools.wraps(view)
    async def shielded_view(*args, **kwargs):
        return await shielded(view(*args, **kwargs))

    return shielded_view
