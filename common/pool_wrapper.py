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
* past capacity, refuses at once (Overloaded: 503 with Retry-After) a request
  that cannot have a connection within ``queue_budget`` seconds of entering
  the server's queue, by the waiters ahead of it and the time a connection is
  held, and one whose wait ran out (common/admission.py);
  the waiters are served first come, first served: a connection given back
  goes to the one that has waited longest, never to one that arrives just
  then (a condition variable's wake-up would let any thread take it, and
  under load some would wait far longer than others: the tail);
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
import threading
import time
from collections import deque
from contextlib import contextmanager
from functools import partial

import psycopg2
import psycopg2.extensions
import psycopg2.extras

from common import admission, contract, deadline, session

# The client's bound exceeds the server's statement_timeout by this much, so
# that a live server cancels the statement itself and the connection survives.
CLIENT_MARGIN = 1.0


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
            deadline.install(database_timeout + CLIENT_MARGIN)
        self._min_size = min_size
        self._max_size = max_size
        self._timeout = timeout
        self._budget = admission.Budget(queue_budget, max_size)
        self._idle = deque()
        self._size = 0  # connections open, idle or in use, or being opened
        self._waiters = deque()  # _Waiters, the longest waiting first
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_settings(cls, settings):
        """The pool an app's Settings ask for, its sessions pinned."""
        arguments = session.pool_arguments(settings)
        return cls(settings.database_url, **arguments, init=session_init(settings))

    def open(self):
        """Open min_size connections now, so that a bad DSN fails at startup."""
        for _ in range(self._min_size):
            with self._lock:
                self._size += 1
            self._release(self._connect())
        return self

    def close(self):
        """Close the idle connections; those in use are closed on return, and
        those waiting get RuntimeError."""
        with self._lock:
            self._closed = True
            while self._idle:
                self._idle.pop().close()
                self._size -= 1
            while self._waiters:
                self._waiters.popleft().hand(CLOSED)

    @property
    def size(self):
        return self._size

    @property
    def idle(self):
        return len(self._idle)

    @property
    def waiting(self):
        """The threads waiting for a connection now."""
        return len(self._waiters)

    @contextmanager
    def acquire(self):
        """A connection for the block, in autocommit; rolled back if the block
        raised inside a transaction, and discarded if it broke."""
        connection = self._take()
        taken = time.monotonic()
        try:
            yield connection
        except BaseException:
            self._discard_or_rollback(connection, taken)
            raise
        self._release(connection, taken)

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
            with self._lock:
                self._give(ROOM)  # its place: the next waiter opens one
            raise

    def _take(self):
        """A connection: an idle one, or a new one where there is room, unless
        others wait; else the one the longest waiter is handed next, unless
        the budget says no (Overloaded)."""
        already = admission.waited()  # in the server's queue
        started = time.monotonic()
        with self._lock:
            if self._closed:
                raise RuntimeError("pool is closed")
            grant = None if self._waiters else self._grant()
            if grant is None:
                if self._budget.refuse(len(self._waiters), already):
                    raise admission.Overloaded()
                waiter = _Waiter()
                self._waiters.append(waiter)
        if grant is None:
            grant = self._wait(waiter, already)
        self._budget.pool.record(already + time.monotonic() - started)
        if grant is CLOSED:
            raise RuntimeError("pool is closed")
        if grant is not ROOM and not _closed_by_server(grant):
            return grant
        if grant is not ROOM:
            grant.close()  # the server ended it while it sat idle: its place is ours
        return self._connect()

    def _grant(self):
        """What a taker may have at once: the last connection given back, or
        ROOM to open one, or None. Under the lock."""
        if self._idle:
            return self._idle.pop()
        if self._size < self._max_size:
            self._size += 1
            return ROOM
        return None

    def _wait(self, waiter, already):
        """What waiter is handed within the timeout; TimeoutError if nothing,
        Overloaded once its budget is spent in a queue that stands."""
        started = time.monotonic()
        refused = TimeoutError("no free database connection")
        try:
            for wait in self._budget.waits(self._timeout, already):
                if waiter.ready.wait(wait):
                    return waiter.grant
                if self._budget.pool.refuse(already + time.monotonic() - started):
                    refused = admission.Overloaded()
                    break
        except BaseException:  # interrupted (gevent's kill): give back what came
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.grant is not CLOSED:
                    self._give(waiter.grant)
            raise
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                raise refused
        return waiter.grant  # handed over as the wait ran out

    def _give(self, grant):
        """A connection given back, or ROOM for one (a place freed): to the
        longest waiter, else kept. Under the lock."""
        if self._waiters:
            self._waiters.popleft().hand(grant)
        elif grant is ROOM:
            self._size -= 1
        else:
            self._idle.append(grant)

    def _release(self, connection, taken=None):
        with self._lock:
            if taken is not None:
                self._budget.held(time.monotonic() - taken)
            if self._closed:
                connection.close()
                self._size -= 1
            elif connection.closed:
                self._give(ROOM)  # a broken one: its place to the next waiter
            else:
                self._give(connection)

    def _discard_or_rollback(self, connection, taken):
        try:
            if not connection.closed:
                connection.rollback()
        except psycopg2.Error:
            connection.close()  # the server or the network is gone
        self._release(connection, taken)


ROOM = object()  # a waiter's grant: room to open a connection
CLOSED = object()  # a waiter's grant: the pool was closed


class _Waiter:
    """One thread waiting for a connection: handed a connection, ROOM or
    CLOSED, then woken."""

    def __init__(self):
        self.ready = threading.Event()
        self.grant = None

    def hand(self, grant):
        self.grant = grant
        self.ready.set()


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
