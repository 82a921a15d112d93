"""psycopg2 connections behind asyncpg's pool shape.

The sync apps write ``with pool.acquire() as connection:`` where the async ones
write ``async with pool.acquire() as connection:``. Unlike psycopg2's own
ThreadedConnectionPool this pool

* keeps every connection it opened (up to max_size) open between requests,
  rather than closing all but minconn on return;
* runs each statement in its own transaction, as asyncpg does (autocommit:
  one round trip for a read, where psycopg2's default would add a BEGIN and
  a COMMIT); a block that needs one transaction for several statements, or
  the COMMIT as a round trip of its own, writes
  ``with connection.transaction():``, as in asyncpg;
* discards a broken connection instead of handing it out again: one that
  failed in use, or that the server closed while it sat idle (a restart);
* waits for a free connection when all are in use, up to ``timeout`` seconds,
  then raises TimeoutError (the apps answer 503), as asyncpg's pool does;
* bounds every wait on Postgres by ``database_timeout`` seconds, as asyncpg's
  ``timeout`` and ``command_timeout`` do: connecting, and each answer (a
  frozen server or network: the client gives up a second later,
  OperationalError, and the connection is closed). A locked table is
  Postgres' to cancel (QueryCanceled), by the statement_timeout each app sets
  in ``init``. Both are OperationalErrors: the apps answer 503;
* calls ``init(connection)`` once for each connection it opens, before the
  connection is used, as asyncpg's ``create_pool(init=...)`` does: the apps
  set their session there (a connection whose init failed is closed);
* is safe to share between threads.
"""

import math
import select
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from functools import partial

import psycopg2
import psycopg2.extensions
import psycopg2.extras

from common import contract, session

# The client's bound exceeds the server's statement_timeout by this much, so
# that a live server cancels the statement itself and the connection survives.
CLIENT_MARGIN = 1.0


class PoolWrapper:
    def __init__(
        self, dsn, *, min_size=1, max_size=20, timeout=5.0, database_timeout=None, init=None
    ):
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError("need 0 <= min_size <= max_size and max_size >= 1")
        self._dsn = dsn
        self._init = init
        self._connect_options = {}
        if database_timeout is not None:
            self._connect_options = {
                "connect_timeout": max(2, math.ceil(database_timeout)),  # libpq's minimum
            }
            # psycopg2 has one wait callback per process, and each app process
            # one pool. With it psycopg2 waits for the socket here, not in libpq.
            # One installed before (psycogreen's, under gevent) is the deployer's
            # choice, and stays.
            current = psycopg2.extensions.get_wait_callback()
            if current is None or getattr(current, "func", None) is _wait_bounded:
                psycopg2.extensions.set_wait_callback(
                    partial(
                        _wait_bounded, timeout=database_timeout + CLIENT_MARGIN, select=os_select()
                    )
                )
        self._min_size = min_size
        self._max_size = max_size
        self._timeout = timeout
        self._idle = deque()
        self._size = 0  # connections open, idle or in use
        self._changed = threading.Condition()
        self._closed = False

    @classmethod
    def from_settings(cls, settings):
        """The pool an app's Settings ask for, its sessions pinned."""
        arguments = session.pool_arguments(settings)
        return cls(settings.database_url, **arguments, init=session_init(settings))

    def open(self):
        """Open min_size connections now, so that a bad DSN fails at startup."""
        for _ in range(self._min_size):
            with self._changed:
                self._size += 1
            self._release(self._connect())
        return self

    def close(self):
        """Close the idle connections; those in use are closed on return."""
        with self._changed:
            self._closed = True
            while self._idle:
                self._idle.pop().close()
                self._size -= 1
            self._changed.notify_all()

    @property
    def size(self):
        return self._size

    @property
    def idle(self):
        return len(self._idle)

    @contextmanager
    def acquire(self):
        """A connection for the block, in autocommit; rolled back if the block
        raised inside a transaction, and discarded if it broke."""
        connection = self._take()
        try:
            yield connection
        except BaseException:
            self._discard_or_rollback(connection)
            raise
        self._release(connection)

    def _connect(self):
        connection = None
        try:
            connection = psycopg2.connect(
                self._dsn,
                connection_factory=Connection,
                cursor_factory=psycopg2.extras.RealDictCursor,
                **self._connect_options,
            )
            connection.autocommit = True
            if self._init is not None:
                self._init(connection)
            return connection
        except BaseException:
            if connection is not None:
                connection.close()  # its session is not what init makes it
            with self._changed:
                self._size -= 1
                self._changed.notify()
            raise

    def _take(self):
        with self._changed:
            if not self._changed.wait_for(self._available, self._timeout):
                raise TimeoutError("no free database connection")
            if self._closed:
                raise RuntimeError("pool is closed")
            if self._idle:
                connection = self._idle.pop()
                if not _closed_by_server(connection):
                    return connection
                connection.close()
                self._size -= 1  # replaced below
            self._size += 1
        return self._connect()

    def _available(self):
        return self._closed or self._idle or self._size < self._max_size

    def _release(self, connection):
        with self._changed:
            if self._closed or connection.closed:
                connection.close()
                self._size -= 1
            else:
                self._idle.append(connection)
            self._changed.notify()

    def _discard_or_rollback(self, connection):
        try:
            if not connection.closed:
                connection.rollback()
        except psycopg2.Error:
            connection.close()  # the server or the network is gone
        self._release(connection)


class Connection(psycopg2.extensions.connection):
    def transaction(self):
        """asyncpg's connection.transaction() in psycopg2's words: since 2.9,
        `with connection:` is one transaction also in autocommit (BEGIN, then
        COMMIT, or ROLLBACK if the block raised)."""
        return self


PIN_SESSION = session.PIN_SESSION.format(timeout="%s")

# What a view may raise through this pool that is the database's doing, not
# the request's: the apps register one handler for these (each app's
# errors.py), which asks unavailable() whether it is the contract's 503.
DATABASE_ERRORS = (psycopg2.Error, TimeoutError)
# What psycopg2 raises itself about the connection, with no SQLSTATE: refused
# (also by pg_hba.conf), lost, timed out (this pool's deadline), closed. It
# raises the same classes for Postgres' own errors, which carry a SQLSTATE
# (OperationalError also covers "statement too complex"): those go by it.
CONNECTION_ERRORS = (psycopg2.OperationalError, psycopg2.InterfaceError)


def unavailable(exception):
    """Whether one of DATABASE_ERRORS means the database cannot serve this now
    (503): no free connection in time, a connection psycopg2 lost or could not
    open, or Postgres' SQLSTATE says so (a read-only standby, a deadlock, a
    login refused: common/contract.py). A write that failed so was not
    committed: the pool rolls it back."""
    if isinstance(exception, TimeoutError):
        return True
    if exception.pgcode is None and isinstance(exception, CONNECTION_ERRORS):
        return True
    return contract.unavailable(exception.pgcode)


def session_init(settings):
    """The pool's init: common/session.py's PIN_SESSION on each connection it
    opens, or None behind a transaction pooler."""
    if not session.pinned(settings):
        return None
    return partial(pin_session, timeout_ms=session.timeout_ms(settings))


def pin_session(connection, timeout_ms):
    with connection.cursor() as cursor:
        cursor.execute(PIN_SESSION, (timeout_ms,))


def _wait_bounded(connection, timeout, select=select.select):
    """psycopg2's wait callback (psycopg2.extras.wait_select) with a deadline.

    Raises OperationalError after `timeout` seconds of a query or connect; then
    psycopg2 closes the connection (no cancel: a frozen server would not answer
    that either), and the pool discards it.
    """
    deadline = time.monotonic() + timeout
    while True:
        state = connection.poll()
        if state == psycopg2.extensions.POLL_OK:
            return
        reading = state == psycopg2.extensions.POLL_READ
        sockets = ([connection], []) if reading else ([], [connection])
        left = deadline - time.monotonic()
        if left <= 0 or not any(select(*sockets, [], left)[:2]):
            raise psycopg2.OperationalError(f"the database did not answer within {timeout}s")


def os_select():
    """The operating system's select(), also where gevent has patched the module:
    psycopg2 blocks its process while it waits, with this pool as without it
    (under gevent, psycogreen's wait callback is what makes it cooperative)."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("select"):
        return monkey.get_original("select", "select")
    return select.select


def _closed_by_server(connection):
    """True if the server ended this idle connection.

    An idle connection with no LISTEN gets no messages; if its socket is
    readable, the server sent its goodbye (or EOF). One non-blocking select(),
    no round trip.
    """
    if connection.closed:
        return True
    readable, _, _ = select.select([connection], [], [], 0)
    return bool(readable)
