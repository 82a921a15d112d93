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


def shaped(processes, threads, holds_thread, budget, bounced=False, copies=1):
    """The Shape of each of `copies` copies of an app of processes x threads
    under a budget of connections (see the module's docstring); bounced: the
    budget is PgBouncer's, not theirs. Copies (--replicas) share the app's
    processes and connections: each runs its share of both, so that N copies
    run on the cores and hold the connections one would."""
    if budget < 1:
        raise ValueError("a connection budget is at least 1")
    whole = split(processes, threads, holds_thread, budget, bounced)
    if copies == 1:
        return whole
    return split(
        share(whole.processes, copies), threads, holds_thread, share(budget, copies), bounced
    )


def split(processes, threads, holds_thread, budget, bounced):
    """One server's Shape: the budget split over its processes."""
    if bounced:
        pool = threads if holds_thread else max(1, budget // processes)
        return Shape(processes, threads, pool, holds_thread)
    processes = min(processes, budget)
    each = budget // processes
    return Shape(processes, threads, min(threads, each) if holds_thread else each, holds_thread)


def share(total, copies):
    """One copy's share of an app-wide budget: round(total / copies), at least
    1. The copies run on the cores one copy would have had, so they split its
    processes (5 sync workers, gunicorn's 2 x cores + 1 on 2 cores: 2 per copy
    for 2 copies, 1 for 4) rather than each taking them all; the same for
    connections, so that Postgres sees no more than with one copy. At least 1:
    a copy needs a process, so 4 copies of Quart's 2 workers run 4 (the report
    states what ran)."""
    return max(1, round(total / copies))


def fitting(available, targets, asked=None):
    """The budget each of `targets` apps started at once gets when Postgres
    accepts `available` more connections: asked (--db-connections) or the
    default, lowered to fit when not asked; None when asked does not fit."""
    share = available // max(targets, 1)
    if asked:
        return asked if asked <= share else None
    return min(DEFAULT_CONNECTIONS, share) if share >= 1 else None
