"""The connection pool: opened with the app, closed when the worker exits."""

import atexit

from flask import current_app

from common.pool_wrapper import PoolWrapper


def init_app(app, settings):
    pool = PoolWrapper.from_settings(settings)
    app.extensions["pool"] = pool.open()
    atexit.register(pool.close)


def acquire():
    """A pooled connection; TimeoutError after POOL_TIMEOUT seconds without a
    free one. Each statement outside a transaction block commits by itself
    (common/: both PoolWrappers): the reads need no transaction, nor does the
    write, one statement (reviews.py)."""
    return current_app.extensions["pool"].acquire()
