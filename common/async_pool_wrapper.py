"""asyncpg's pool in the PoolWrapper's shape (common/pool_wrapper.py): the
async apps write ``async with pool.acquire() as connection:`` where the sync
ones write ``with pool.acquire() as connection:``; both are made from the
app's Settings by from_settings(). Unlike asyncpg's own pool as it comes, it

* waits at most POOL_TIMEOUT for a free connection, then raises TimeoutError
  (the apps answer 503), where asyncpg would wait forever;
* past capacity, refuses at once (Overloaded: 503 with Retry-After) a request
  that cannot have a connection within QUEUE_BUDGET, by the waiters ahead of
  it and the time a connection is held, and one whose wait ran out; and tells
  the request's admission (common/admission.py's Gate) that it has passed
  the queue once it has a place;
* serves its waiters first come, first served, as the psycopg2 one does:
  asyncpg's pool hands a connection back through an asyncio.Queue, whose
  woken getter can find it taken by one that arrived just then, and go back
  to the end of the line; an asyncio.Semaphore of max_size slots (FIFO since
  Python 3.11: a newcomer queues behind any waiter) lets no one pass;
* bounds every wait on Postgres by DATABASE_TIMEOUT: connecting, and each
  statement (Postgres cancels it: the session's statement_timeout,
  common/session.py; a frozen server: asyncpg gives up a second later);
* pins each new connection's session once (common/session.py);
* sends nothing when it takes a connection back: by default asyncpg sends
  RESET ALL, CLOSE ALL, UNLISTEN * and an advisory unlock, a round trip on
  every release, and RESET ALL would undo the pinned session (an open
  transaction asyncpg still rolls back itself);
* behind a transaction pooler (TRANSACTION_POOLING=1), keeps no named prepared
  statement: the next statement may run on another server connection
  ("prepared statement __asyncpg_stmt_1__ does not exist");
* keeps what a block did when the connection fails on release (Postgres went
  away after its statement committed): a stored review is answered 201, not 500.

asyncpg's pool belongs to the event loop it was opened on: open() and close()
run on the server's loop (each app's hooks), never at import.
"""

import asyncio
import functools
import logging
import time
from contextlib import asynccontextmanager

import asyncpg

from common import admission, contract, session

logger = logging.getLogger(__name__)


class PoolWrapper:
    def __init__(
        self,
        dsn,
        *,
        min_size=1,
        max_size=20,
        timeout=5.0,
        database_timeout=None,
        queue_budget=0,
        init=None,
        statement_cache=True,
    ):
        self._dsn = dsn
        self._sizes = {"min_size": min_size, "max_size": max_size}
        self._timeout = timeout
        self._budget = admission.Budget(queue_budget, max_size)
        self._waiting = 0  # tasks waiting for a place now
        self._init = init
        self._options = {} if statement_cache else {"statement_cache_size": 0}
        if database_timeout is not None:
            self._options.update(timeout=database_timeout, command_timeout=database_timeout + 1)
        self._pool = None
        self._slots = None  # max_size places, taken in arrival order

    @classmethod
    def from_settings(cls, settings):
        """The pool an app's Settings ask for, its sessions pinned."""
        arguments = session.pool_arguments(settings)
        return cls(
            settings.database_url,
            **arguments,
            init=session_init(settings),
            statement_cache=not settings.transaction_pooling,
        )

    async def open(self):
        """Open the pool (min_size connections now)."""
        self._pool = await asyncpg.create_pool(
            self._dsn, **self._sizes, reset=keep_session, init=self._init, **self._options
        )
        self._slots = asyncio.Semaphore(self._sizes["max_size"])
        return self

    async def close(self):
        await self._pool.close()

    @asynccontextmanager
    async def acquire(self):
        """A pooled connection for an async with block; TimeoutError after
        POOL_TIMEOUT seconds without a free one, Overloaded past the budget."""
        pool = self._pool
        await self._take_place()
        taken = time.monotonic()
        try:
            connection = await pool.acquire()  # a place held: a connection is free
            try:
                yield connection
            finally:
                try:
                    await pool.release(connection)
                except Exception:  # asyncpg has terminated it; the pool opens another
                    logger.warning("a connection failed on release and was closed", exc_info=True)
        finally:
            self._budget.held(time.monotonic() - taken)
            self._slots.release()

    async def _take_place(self):
        """One of max_size places, in arrival order, unless the budget says no."""
        if self._slots.locked() and self._budget.refuse(self._waiting, 0.0):
            raise admission.Overloaded()
        started = time.monotonic()
        # One acquire for the whole wait, asked again and again whether to go on:
        # a new acquire would lose the place in line.
        place = asyncio.ensure_future(self._slots.acquire())
        self._waiting += 1
        try:
            for wait in self._budget.waits(self._timeout, 0.0):
                if (await asyncio.wait({place}, timeout=wait))[0]:
                    break
                if self._budget.pool.refuse(time.monotonic() - started):
                    raise admission.Overloaded()
            else:
                raise TimeoutError("no free database connection")
        except BaseException:
            if not place.cancel() and not place.cancelled() and place.exception() is None:
                self._slots.release()  # it came as the wait ended
            raise
        finally:
            self._waiting -= 1
        self._budget.pool.record(time.monotonic() - started)
        admission.passed()


def session_init(settings):
    """The pool's init: common/session.py's PIN_SESSION on each connection it
    opens, or None behind a transaction pooler."""
    if not session.pinned(settings):
        return None
    return functools.partial(pin_session, timeout_ms=session.timeout_ms(settings))


PIN_SESSION = session.PIN_SESSION.format(timeout="$1")

# What a view may raise through this pool that is the database's doing, not
# the request's: the apps register one handler for these (each app's
# errors.py), which asks unavailable() whether it is the contract's 503.
# Beside Postgres' own errors: no free connection in time (TimeoutError), a
# refused socket (OSError), or what asyncpg raises itself, without a SQLSTATE,
# about a connection Postgres dropped: lost mid-query
# (ConnectionDoesNotExistError), closed (InterfaceError), left busy by a
# cancelled operation (InternalClientError: "cannot switch to state ...").
CONNECTION_ERRORS = (TimeoutError, OSError, asyncpg.InterfaceError, asyncpg.InternalClientError)
DATABASE_ERRORS = (asyncpg.PostgresError, *CONNECTION_ERRORS)


def unavailable(exception):
    """Whether one of DATABASE_ERRORS means the database cannot serve this now
    (503): the connection's errors, or Postgres' SQLSTATE says so (a read-only
    standby, a deadlock, a login refused: common/contract.py). A write that
    failed so was not committed."""
    if isinstance(exception, CONNECTION_ERRORS):
        return True
    return contract.unavailable(exception.sqlstate)


async def pin_session(connection, timeout_ms):
    await connection.execute(PIN_SESSION, timeout_ms)


async def keep_session(connection):
    """The pool's reset: nothing (see the module's docstring)."""
