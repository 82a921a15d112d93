"""The connection pool: opened when a worker starts serving, closed when it stops."""

import asyncpg


def init_app(app, settings):
    app.ctx.settings = settings
    app.before_server_start(open_pool)
    app.after_server_stop(close_pool)


async def open_pool(app):
    settings = app.ctx.settings
    app.ctx.pool = await asyncpg.create_pool(
        settings.database_url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
    )


async def close_pool(app):
    await app.ctx.pool.close()


def acquire(request):
    """A pooled connection for an async with block; TimeoutError after
    POOL_TIMEOUT seconds without a free one (asyncpg would wait forever).

    asyncpg commits each statement outside a transaction block by itself: each
    handler runs one statement, so none needs one.
    """
    ctx = request.app.ctx
    return ctx.pool.acquire(timeout=ctx.settings.pool_timeout)
