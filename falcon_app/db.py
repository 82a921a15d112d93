"""The connection pool: opened with the app, closed when the worker exits."""

import atexit

from common.pool_wrapper import PoolWrapper


def open_pool(settings):
    """The pool, open, and closed when the worker process exits.

    Resources keep it and write `with self.pool.acquire() as connection:`:
    committed on success, rolled back on error; TimeoutError after POOL_TIMEOUT
    seconds without a free connection.
    """
    pool = PoolWrapper.from_settings(settings)
    atexit.register(pool.close)
    return pool.open()

