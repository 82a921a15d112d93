"""The connection pool: opened when a worker starts serving, closed when it stops."""

import functools

from quart import current_app, request

from common.async_pool_wrapper import PoolWrapper
from common.async_views import shielded


def init_app(app, settings):
    # asyncpg's pool belongs to the event loop it was opened on: the server's,
    # which runs from before_serving to after_serving, not create_app's.
    pool = PoolWrapper.from_settings(settings)
    app.extensions["pool"] = pool
    app.before_serving(pool.open)
    app.after_serving(pool.close)


def acquire():
    """A pooled connection; TimeoutError after POOL_TIMEOUT seconds without a
    free one. Each statement outside a transaction block commits by itself
    (common/: both PoolWrappers): the reads need no transaction, nor does the
    write, one statement (reviews.py)."""
    return current_app.extensions["pool"].acquire()


def finished(view):
    """The view, run to its end even if its client goes away first
    (common/async_views.py says why). A POST's body is read first, unshielded:
    a client that leaves before sending all of it costs nothing more (Quart
    would wait BODY_TIMEOUT for the rest); a GET's, if any, is never read."""

    @functools.wraps(view)
    async def shielded_view(*args, **kwargs):
        if request.method == "POST":
            await request.get_data()  # kept: the view's get_data() returns it
        return await shielded(view(*args, **kwargs))

    return shielded_view
