"""The connection pool: opened when a worker starts serving, closed when it stops."""

import asyncio
import functools
import logging
from contextlib import asynccontextmanager

import asyncpg
from quart import current_app, request

logger = logging.getLogger(__name__)

# What each session needs, whatever an operator made the server's defaults
# (postgresql.conf, ALTER DATABASE or ROLE ... SET): READ COMMITTED, which the
# keyed write relies on (reviews.py), and a statement_timeout of
# DATABASE_TIMEOUT or the server's own, whichever is stricter (0 there: none).
PIN_SESSION = """SELECT set_config('default_transaction_isolation', 'read committed', false),
                        set_config('statement_timeout',
                                   least(nullif(setting::int, 0), $1)::text, false)
                   FROM pg_settings
                  WHERE name = 'statement_timeout'"""


def init_app(app, settings):
    # asyncpg's pool belongs to the event loop it was created on: the server's,
    # which runs from before_serving to after_serving, not create_app's.
    async def open_pool():
        app.extensions["pool"] = await asyncpg.create_pool(
            settings.database_url,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            reset=keep_session,
            init=session_init(settings),
            **connect_options(settings),
        )

    async def close_pool():
        await app.extensions["pool"].close()

    app.extensions["pool_timeout"] = settings.pool_timeout
    app.before_serving(open_pool)
    app.after_serving(close_pool)


def connect_options(settings):
    """Every wait on Postgres bounded by DATABASE_TIMEOUT, as the PoolWrapper's:
    connecting, and each statement (Postgres cancels it: session_init; if
    Postgres is frozen, asyncpg gives up a second later). Both end in a 503
    (errors.py).

    Behind a transaction pooler (TRANSACTION_POOLING=1) the next statement may
    run on another server connection: asyncpg's named prepared statements
    ("prepared statement __asyncpg_stmt_1__ does not exist") must go (its reset
    query on release, which would undo the pooler's own settings on a
    connection that is no longer ours, is gone already: keep_session).
    """
    options = {
        "timeout": settings.database_timeout,
        "command_timeout": settings.database_timeout + 1,
    }
    if settings.transaction_pooling:
        options["statement_cache_size"] = 0
    return options


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


async def pin_session(connection, timeout_ms):
    await connection.execute(PIN_SESSION, timeout_ms)


async def keep_session(connection):
    """The pool's reset, for a connection it takes back: nothing. By default
    asyncpg sends RESET ALL, CLOSE ALL, UNLISTEN * and an advisory unlock, a
    round trip on every release, and RESET ALL would undo what session_init
    set: this app sets its session once and never changes it (an open
    transaction asyncpg still rolls back itself)."""


@asynccontextmanager
async def acquire():
    """A pooled connection for an async with block; TimeoutError after
    POOL_TIMEOUT seconds without a free one (asyncpg would wait forever).

    asyncpg commits each statement outside a transaction block by itself: the
    reads need no transaction, nor does the write, one statement (reviews.py).
    """
    extensions = current_app.extensions
    pool = extensions["pool"]
    connection = await pool.acquire(timeout=extensions["pool_timeout"])
    try:
        yield connection
    finally:
        await release(pool, connection)


async def release(pool, connection):
    """Give the connection back. If resetting it fails (Postgres went away after
    the block's statement committed: InternalClientError, a lost connection),
    asyncpg has already terminated it and the pool opens another later. What the
    block did stands: a stored review is answered 201, not 500."""
    try:
        await pool.release(connection)
    except Exception:
        logger.warning("a connection failed on release and was closed", exc_info=True)


def finished(view):
    """The view, run to its end even if its client goes away first.

    When a client disconnects, the server cancels the request's task, and
    asyncpg then cancels the query under way with a CancelRequest on a
    connection of its own. Behind a transaction pooler that request can reach a
    server connection that already serves another client, and fail that
    client's statement (docs/deploy.md#pgbouncer). Shielded, the view finishes
    as a sync worker's does (its answer goes nowhere), and nothing is cancelled.

    A POST's body is read first, unshielded: a client that leaves before
    sending all of it costs nothing more (Quart would wait BODY_TIMEOUT for the
    rest). A GET's body, if any, is never read, as before.
    """

    @functools.wraps(view)
    async def shielded(*args, **kwargs):
        if request.method == "POST":
            await request.get_data()  # kept: the view's get_data() returns it
        return await asyncio.shield(ended(view(*args, **kwargs)))

    return shielded


def ended(coroutine):
    """coroutine as a task whose error, if its client has gone, is dropped
    with its answer rather than logged as never retrieved."""
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return task
