"""The connection pool: opened with the app, closed when the worker exits."""

import atexit

from flask import current_app

from common.pool_wrapper import PoolWrapper


def init_app(app, settings):
    pool = PoolWrapper(
        settings.database_url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        timeout=settings.pool_timeout,
        database_timeout=settings.database_timeout,
    )
    app.extensions["pool"] = pool.open()
    atexit.register(pool.close)


def acquire():
    """A pooled connection for a with block; TimeoutError after POOL_TIMEOUT
    seconds without a free one.

    The PoolWrapper commits each statement outside a transaction block by
    itself, as asyncpg does: the reads need no transaction; the write opens one
    (reviews.py)."""
    return current_app.extensions["pool"].acquire()
