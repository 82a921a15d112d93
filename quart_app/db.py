"""The connection pool: opened when a worker starts serving, closed when it stops."""

from quart import current_app, request

from common.async_pool_wrapper import PoolWrapper
from common.async_views import finishing


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


async def read_body():
    """A POST's body, before its view is shielded: Quart would wait BODY_TIMEOUT
    for the rest. Kept: the view's get_data() returns it. A GET's is never read."""
    if request.method == "POST":
        await request.get_data()


finished = finishing(read_body)  # each view runs to its end (common/async_views.py)
