"""The connection pool: opened when a worker starts serving, closed when it stops."""

import asyncpg
from quart import current_app


def init_app(app, settings):
    # asyncpg's pool belongs to the event loop it was created on: the server's,
    # which runs from before_serving to after_serving, not create_app's.
    async def open_pool():
        app.extensions["pool"] = await asyncpg.create_pool(
            settings.database_url,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
        )

    async def close_pool():
        await app.extensions["pool"].close()

    app.extensions["pool_timeout"] = settings.pool_timeout
    app.before_serving(open_pool)
    app.after_serving(close_pool)


def acquire():
    """A pooled connection for an async with block; TimeoutError after
    POOL_TIMEOUT seconds without a free one (asyncpg would wait forever).

    asyncpg commits each statement outside a transaction block by itself: each
    handler runs one statement, so none needs one.
    """
    extensions = current_app.extensions
    return extensions["pool"].acquire(timeout=extensions["pool_timeout"])
