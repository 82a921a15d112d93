"""psycopg2 connections behind asyncpg's pool shape.

The sync apps write ``with pool.acquire() as connection:`` where the async ones
write ``async with pool.acquire() as connection:``. Unlike psycopg2's own
ThreadedConnectionPool this pool

* keeps every connection it opened (up to max_size) open between requests,
  rather than closing all but minconn on return;
* commits what the block wrote, and rolls back if the block raised;
* discards a broken connection instead of handing it out again: one that
  failed in use, or that the server closed while it sat idle (a restart);
* waits for a free connection when all are in use, up to ``timeout`` seconds,
  then raises TimeoutError (the apps answer 503), as asyncpg's pool does;
* is safe to share between threads.
"""

import select
import threading
from collections import deque
from contextlib import contextmanager

import psycopg2
import psycopg2.extras


class PoolWrapper:
    def __init__(self, dsn, *, min_size=1, max_size=20, timeout=5.0):
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError("need 0 <= min_size <= max_size and max_size >= 1")
        self._dsn = dsn
        self._min_size = min_size
        self._max_size = max_size
        self._timeout = timeout
        self._idle = deque()
        self._size = 0  # connections open, idle or in use
        self._changed = threading.Condition()
        self._closed = False

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
        """A connection for the block: committed on success, rolled back on error."""
        connection = self._take()
        try:
            yield connection
            connection.commit()
        except BaseException:
            self._discard_or_rollback(connection)
            raise
        self._release(connection)

    def _connect(self):
        try:
            return psycopg2.connect(self._dsn, cursor_factory=psycopg2.extras.RealDictCursor)
        except BaseException:
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
