"""The connection pool: opened with the app, closed when the worker exits."""

import atexit
import functools

from common.pool_wrapper import PoolWrapper

# What each session needs, whatever an operator made the server's defaults
# (postgresql.conf, ALTER DATABASE or ROLE ... SET): READ COMMITTED, which the
# keyed write relies on (reviews.py), and a statement_timeout of
# DATABASE_TIMEOUT or the server's own, whichever is stricter (0 there: none).
PIN_SESSION = """SELECT set_config('default_transaction_isolation', 'read committed', false),
                        set_config('statement_timeout',
                                   least(nullif(setting::int, 0), %s)::text, false)
                   FROM pg_settings
                  WHERE name = 'statement_timeout'"""


def open_pool(settings):
    """The pool, open, and closed when the worker process exits.

    Resources keep it and write `with self.pool.acquire() as connection:`:
    committed on success, rolled back on error; TimeoutError after POOL_TIMEOUT
    seconds without a free connection.
    """
    pool = PoolWrapper(
        settings.database_url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        timeout=settings.pool_timeout,
        database_timeout=settings.database_timeout,
        init=session_init(settings),
    )
    atexit.register(pool.close)
    return pool.open()


def session_init(settings):
    """The pool's init: PIN_SESSION on each connection it opens, once, not
    per request. None behind a transaction pooler (TRANSACTION_POOLING=1): the
    settings would stay on a server connection that serves other clients next;
    PgBouncer pins its own (connect_query, docker/pgbouncer/entrypoint.sh)."""
    if settings.transaction_pooling:
        return None
    return functools.partial(
        pin_session, timeout_ms=max(1, round(settings.database_timeout * 1000))
    )


def pin_session(connection, timeout_ms):
    with connection.cursor() as cursor:
        cursor.execute(PIN_SESSION, (timeout_ms,))
