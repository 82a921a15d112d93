"""One app's concurrency under its database-connection budget (--db-connections):
the processes and threads its server runs, and the pool each process opens.

The budget is what one app may hold at Postgres, the same for every app of a
run. It is split across the app's processes by what each can use:
- a process whose request holds its thread while it waits on Postgres (a
  sync worker, a threaded one) can use one connection per thread, no more;
- an event loop (or green threads with a cooperative driver) can use as
  many as it has requests waiting: it gets an equal share.
A process with no connection could serve nothing, so an app never runs more
such processes than its budget allows. Behind PgBouncer (--pgbouncer) the
budget is PgBouncer's pool at Postgres instead, and the processes keep what
they can use: many sync workers then share a few server connections.
"""

from dataclasses import dataclass

DEFAULT_CONNECTIONS = 20  # per app, when --db-connections is not given


@dataclass(frozen=True)
class Shape:
    """How one app runs: its processes, the threads of each (1: a sync worker
    or an event loop), the pool each opens, and whether a request holds its
    thread while it waits on Postgres."""

    processes: int
    threads: int
    pool: int
    holds_thread: bool

    @property
    def connections(self):
        """The most connections the app can hold: every pool full."""
        return self.processes * self.pool

    def in_flight(self, clients=None):
        """The most requests it can have waiting on Postgres at once: the least
        of its pools, its threads where a request holds one, and the clients."""
        limits = [self.connections]
        if self.holds_thread:
            limits.append(self.processes * self.threads)
        if clients:
            limits.append(clients)
        return min(limits)


def shaped(processes, threads, holds_thread, budget, bounced=False):
    """The Shape of processes x threads under a budget of connections (see
    the module's docstring); bounced: the budget is PgBouncer's, not theirs."""
    if budget < 1:
        raise ValueError("a connection budget is at least 1")
    if bounced:
        pool = threads if holds_thread else max(1, budget // processes)
        return Shape(processes, threads, pool, holds_thread)
    processes = min(processes, budget)
    share = budget // processes
    return Shape(processes, threads, min(threads, share) if holds_thread else share, holds_thread)


def fitting(available, targets, asked=None):
    """The budget each of `targets` apps started at once gets when Postgres
    accepts `available` more connections: asked (--db-connections) or the
    default, lowered to fit when not asked; None when asked does not fit."""
    share = available // max(targets, 1)
    if asked:
        return asked if asked <= share else None
    return min(DEFAULT_CONNECTIONS, share) if share >= 1 else None
