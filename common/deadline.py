"""psycopg2's wait callback with a deadline: every wait on Postgres of a
PoolWrapper's connection (common/pool_wrapper.py) is bounded, connecting and
each answer, as asyncpg's timeout and command_timeout bound asyncpg's."""

import select
import sys
import time
from functools import partial

import psycopg2
import psycopg2.extensions


def install(timeout):
    """psycopg2 has one wait callback per process, and each app process one
    pool. With it psycopg2 waits for the socket here, not in libpq. One
    installed before (psycogreen's, under gevent) is the deployer's choice, and
    stays."""
    current = psycopg2.extensions.get_wait_callback()
    if current is None or getattr(current, "func", None) is _wait_bounded:
        psycopg2.extensions.set_wait_callback(
            partial(_wait_bounded, timeout=timeout, select=os_select())
        )


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
