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


class Admission:
    """gunicorn's threads: a request waits in the worker's queue before the app
    sees it; one that spent its budget there is refused before any work."""

    def __init__(self, pool):
        self.pool = pool

    def process_request(self, req, resp):
        self.pool.admit()
