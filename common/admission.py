"""Admission: past capacity, refuse at once rather than let every request wait.

A server that accepts every request lets a queue grow past capacity, and every
request in it misses the latency objective together: at twice its capacity
each app answered 1-2 % of its requests within 100 ms and refused none
(docs/reliability.md, "Past capacity"). Each app instead gives a request
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

A refusal is the contract's 503 with Retry-After (Overloaded), costs no
database round trip, and writes nothing. QUEUE_BUDGET=0 turns admission off:
then only POOL_TIMEOUT bounds the pool's queue.
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


class Budget:
    """One pool's admission: QUEUE_BUDGET and the running mean of how long a
    connection is held, which turns the queue ahead into an expected wait."""

    def __init__(self, seconds, max_size):
        self.seconds = seconds
        self._max_size = max_size
        self.hold = 0.0  # seconds a connection is held, on average; 0: not known yet
        self._window = (0.0, None)  # (when this interval ends, its shortest wait)
        self._standing = False  # the last interval's verdict: its shortest wait past the budget

    def held(self, seconds):
        """A connection was held this long (called as it is given back)."""
        self.hold += HOLD_WEIGHT * (seconds - self.hold)

    def standing(self, waited, now=None):
        """Whether a request that waited `waited` seconds before its app
        started it is refused: past the budget, in a queue that stood past it
        through the last whole interval (CoDel's rule)."""
        if not self.seconds:
            return False
        now = time.monotonic() if now is None else now
        ends, shortest = self._window
        if now >= ends:  # a new interval: judge the last one (an idle gap: no queue)
            self._standing = now < ends + INTERVAL and shortest is not None
            self._standing = self._standing and shortest > self.seconds
            ends, shortest = now + INTERVAL, None
        self._window = (ends, waited if shortest is None else min(shortest, waited))
        return self._standing and waited > self.seconds

    def left(self, already):
        """What is left of the budget after `already` seconds; None: no budget."""
        return None if not self.seconds else self.seconds - already

    def refuse(self, ahead, left):
        """Whether a request with `ahead` waiters before it and `left` seconds of
        budget is refused at once: its expected wait is past what is left."""
        if left is None:
            return False
        return left <= 0 or (ahead + 1) * self.hold / self._max_size > left

    def wait(self, timeout, left):
        """How long a waiter may wait: POOL_TIMEOUT or what is left of its budget."""
        return timeout if left is None else min(timeout, left)

    def timed_out(self, timeout, left):
        """What a waiter whose wait ran out raises: Overloaded if its budget ran
        out first, else TimeoutError (no free connection in POOL_TIMEOUT: the
        database cannot serve, 503 database unavailable)."""
        if left is not None and left < timeout:
            return Overloaded()
        return TimeoutError("no free database connection")


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
