"""What every session of every app needs, set once per connection by both
PoolWrappers (common/pool_wrapper.py, common/async_pool_wrapper.py), whatever
an operator made the server's defaults (postgresql.conf, ALTER DATABASE or
ROLE ... SET): READ COMMITTED, which the keyed write relies on (each app's
reviews.py), and a statement_timeout of DATABASE_TIMEOUT or the server's own,
whichever is stricter (0 there: none). Behind a transaction pooler
(TRANSACTION_POOLING=1) nothing is set: the settings would stay on a server
connection that serves other clients next; PgBouncer pins its own
(connect_query, docker/pgbouncer/entrypoint.sh)."""

# {timeout}: the driver's placeholder for the app's timeout in milliseconds.
PIN_SESSION = """SELECT set_config('default_transaction_isolation', 'read committed', false),
                        set_config('statement_timeout',
                                   least(nullif(setting::int, 0), {timeout})::text, false)
                   FROM pg_settings
                  WHERE name = 'statement_timeout'"""


def pool_arguments(settings):
    """What both PoolWrappers take from an app's Settings, but for its URL."""
    return {
        "min_size": settings.pool_min_size,
        "max_size": settings.pool_max_size,
        "timeout": settings.pool_timeout,
        "database_timeout": settings.database_timeout,
        "queue_budget": settings.queue_budget,
    }


def timeout_ms(settings):
    """DATABASE_TIMEOUT in whole milliseconds, at least 1 (0 would mean none)."""
    return max(1, round(settings.database_timeout * 1000))


def pinned(settings):
    """Whether the pools pin the session (not behind a transaction pooler)."""
    return not settings.transaction_pooling
