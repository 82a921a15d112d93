"""Admission: past capacity, refuse at once rather than let every request wait.

A server that accepts every request lets a queue grow past capacity, and every
request in it misses the latency objective together: at twice its capacity
each app answered 1-2 % of its requests within 100 ms and refused none
(issue 42's measurement). Each app instead gives a request
QUEUE_BUDGET seconds to start its work, counted from when it reached the
server's queue:

* in the sync apps, the time it waited in gunicorn's worker for a thread
  (common/gthread.py stamps it; the app cannot see that queue otherwise):
  a request that spent its budget there is refused before any work;
* in the async apps, the event loop's lag: a loop that reads and starts every
  request falls behind when it has more than it can run, and a request read
  now waits about that long for its turn (LoopLag; Node's toobusy does the
  same): while the lag is past the budget, a new request is refused before
  any work;
* in every app, the wait for a pool connection (both PoolWrappers): a request
  the pool cannot serve within what is left of its budget, by the queue ahead
  of it and the time a connection is held, is refused at once, and one whose
  wait ran out is refused then.

Each only where that queue stands (Standing, CoDel's rule): the shortest wait
of the last INTERVAL passed the budget too. A burst, a stall of the machine or
a closed loop at its peak is served; a queue that stays is cut. A refusal is
the contract's 503 with Retry-After (Overloaded), costs no database round
trip, and writes nothing. QUEUE_BUDGET=0 turns admission off: then only
POOL_TIMEOUT bounds the pool's queue (docs/reliability.md, "Past capacity").
"""

import asyncio
import contextlib
import threading
import time

from common.contract import OVERLOADED, ContractError

RETRY_AFTER = "1"  # seconds: a client that backs off this long finds the queue drained
HOLD_WEIGHT = 0.1  # the weight of the newest hold time in the pools' running mean
# CoDel's interval (Nichols and Jacobson, "Controlling Queue Delay"): a wait
# past the budget is refused only where the shortest wait of the last
# interval was past it too. A burst or a stall of the machine passes (a
# closed loop at its peak queues too, briefly); a queue that stays does not.
INTERVAL = 0.1


class Overloaded(ContractError):
    """The contract's 503 for a request refused by admission."""

    headers = {"Retry-After": RETRY_AFTER}

    def __init__(self):
        super().__init__(503, OVERLOADED)


_server = threading.local()  # the request this thread serves: when it was queued


def queued_at(when):
    """Record when this thread's request entered the server's queue (monotonic
    seconds; None: unknown). common/gthread.py calls it."""
    _server.queued_at = when


def waited():
    """Seconds this thread's request has waited since it was queued, 0 if unknown."""
    when = getattr(_server, "queued_at", None)
    return 0.0 if when is None else time.monotonic() - when


class Standing:
    """CoDel's test for a standing queue (Nichols and Jacobson, "Controlling
    Queue Delay"), over the waits recorded: a queue stands where the shortest
    wait of the last whole INTERVAL reached the budget, and goes on standing
    while that shortest wait stays past half the budget."""

    def __init__(self, seconds):
        self.seconds = seconds
        self._window = (0.0, None)  # (when this interval ends, its shortest wait)
        self.stands = False  # the last interval's verdict
        self.last = 0.0  # the wait recorded last

    def record(self, waited, now=None):
        """A request waited this long (now: its monotonic time)."""
        now = time.monotonic() if now is None else now
        ends, shortest = self._window
        if now >= ends:  # a new interval: judge the last (a gap between: no queue)
            recent = now < ends + INTERVAL and shortest is not None
            # A queue that stands is cut to about the budget, and some waits
            # then fall just under it: it stands until they fall below half.
            floor = self.seconds / 2 if self.stands else self.seconds
            self.stands = recent and shortest >= floor
            ends, shortest = now + INTERVAL, None
        self._window = (ends, waited if shortest is None else min(shortest, waited))
        self.last = waited

    def refuse(self, waited, now=None):
        """Record the wait; whether it is refused: past the budget, in a queue that stands."""
        if not self.seconds:
            return False
        self.record(waited, now)
        return self.stands and waited >= self.seconds


class Budget:
    """One pool's admission: QUEUE_BUDGET; whether the queue before the app
    (the server's, or the loop's lag) stands, and the pool's; and the running
    mean of how long a connection is held, which turns the waiters ahead into
    an expected wait."""

    def __init__(self, seconds, max_size):
        self.seconds = seconds
        self._max_size = max_size
        self.hold = 0.0  # seconds a connection is held, on average; 0: not known yet
        self.queue = Standing(seconds)  # before the app: gunicorn's queue, the loop's lag
        self.pool = Standing(seconds)  # for a connection

    def held(self, seconds):
        """A connection was held this long (called as it is given back)."""
        self.hold += HOLD_WEIGHT * (seconds - self.hold)

    def refuse(self, ahead, already):
        """Whether a request that waited `already` seconds, with `ahead` waiters
        before it for a connection, is refused at once: the pool's queue stands,
        and the wait it predicts passes what is left of the budget."""
        if not self.seconds or not self.pool.stands:
            return False
        return (ahead + 1) * self.hold / self._max_size > self.seconds - already

    def waits(self, timeout, already):
        """How long a waiter waits before it asks again whether the pool's queue
        stands: what is left of its budget, then an INTERVAL at a time, up to
        POOL_TIMEOUT in all."""
        if not self.seconds:
            yield timeout
            return
        step = min(timeout, max(0.0, self.seconds - already))
        spent = 0.0
        while True:
            yield step
            spent += step
            if spent >= timeout:
                return
            step = min(INTERVAL, timeout - spent)


class LoopLag:
    """How far behind the running event loop is: a task asks to wake every
    INTERVAL seconds and records how late it woke. Started and stopped with
    the server's loop (each async PoolWrapper's open and close)."""

    INTERVAL = 0.01  # seconds: a wake-up every 10 ms costs the loop next to nothing

    def __init__(self):
        self.seconds = 0.0  # the lateness of the last wake-up
        self._task = None

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self):
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _watch(self):
        while True:
            asked = time.monotonic()
            await asyncio.sleep(self.INTERVAL)
            self.seconds = max(0.0, time.monotonic() - asked - self.INTERVAL)
