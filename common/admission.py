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
* in the async apps, the requests ahead of it (Gate): an event loop reads and
  starts every request, and they all queue for the loop and then the pool. A
  new request is refused as it reaches the app, before the framework, where
  those admitted and not yet given a pool connection, at the pace such
  requests get one, would keep it past the budget (Pace: the queue's own
  drain rate, as gunicorn's threads take from theirs), or where as many
  requests are open, answered or not, as the loop's lag permits (Lag: a
  limit that falls while the loop runs late, whatever the requests wait
  on: the ratings route waits on other services with no pool connection);
* in every app, the wait for a pool connection (both PoolWrappers): a request
  the pool cannot serve within what is left of its budget, by the queue ahead
  of it and the time a connection is held, is refused at once, and one whose
  wait ran out is refused then.

Each only where that queue stands (Standing, CoDel's rule): the shortest wait
of the last INTERVAL passed the budget too. A burst, a stall of the machine or
a closed loop at its peak is served; a queue that stays is cut. A refusal is
the contract's 503 with Retry-After (Overloaded; REFUSAL where a server writes
it before the framework), costs no database round trip, and writes nothing.
QUEUE_BUDGET=0 turns admission off: then only POOL_TIMEOUT bounds the pool's
queue (docs/reliability.md, "Past capacity").
"""

import asyncio
import contextvars
import json
import math
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
# How often an async worker's Gate asks its event loop how late it runs (Lag).
TICK = 0.005
# Past its target lag, the share of the requests open an async worker's
# limit falls to, at each late tick (a multiplicative decrease, as TCP's and
# Netflix's concurrency-limits' AIMD; within it, it grows by one a tick).
BACKOFF = 0.9
# The target lag, as a share of QUEUE_BUDGET: 10 ms of 50. A request waits
# out the lag at each of its turns of the loop, several per request. Tried
# on the ratings route at four times each capacity, one round each: Sanic
# kept more of its capacity in time with 10 ms than with 25 (half the
# budget), Quart about as much, and both refused faster.
LAG_SHARE = 0.2
# The fewest requests open the lag's limit may fall to: the 16 threads a
# gunicorn worker of Flask's or Falcon's serves at once (WEB_THREADS).
LEAST_OPEN = 16
# The contract's 503 as the apps' jsonify writes it (the JSON, then a newline),
# for a refusal written before the framework: its body and its fields.
REFUSAL = (json.dumps({"error": OVERLOADED}, separators=(",", ":")) + "\n").encode()
REFUSAL_FIELDS = (
    ("Content-Type", "application/json"),
    ("Content-Length", str(len(REFUSAL))),
    ("Retry-After", RETRY_AFTER),
)
REFUSAL_HEAD = "HTTP/1.1 503 Service Unavailable\r\n" + "".join(
    f"{name}: {value}\r\n" for name, value in REFUSAL_FIELDS
)
# The whole answer on a connection kept alive, for a server that writes it
# itself, before it parses the request (plain_get).
KEPT_ALIVE = (REFUSAL_HEAD + "\r\n").encode() + REFUSAL
# Fields that make a request more than its head (a body, the connection's
# fate, another protocol): such a request is the server's to parse.
NOT_PLAIN = (b"content-length:", b"transfer-encoding:", b"connection:", b"upgrade:", b"expect:")


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

    def stands_now(self, now):
        """The last verdict, while it is fresh: a queue that records no wait
        for a whole INTERVAL after its interval ended (say, every newcomer
        refused) no longer counts as standing."""
        return self.stands and now < self._window[0] + INTERVAL

    def refuse(self, waited, now=None):
        """Record the wait; whether it is refused: past the budget, in a queue that stands."""
        if not self.seconds:
            return False
        self.record(waited, now)
        return self.stands and waited >= self.seconds


class Budget:
    """One pool's admission: QUEUE_BUDGET; whether the pool's queue stands; and
    the running mean of how long a connection is held, which turns the waiters
    ahead into an expected wait."""

    def __init__(self, seconds, max_size):
        self.seconds = seconds
        self._max_size = max_size
        self.hold = 0.0  # seconds a connection is held, on average; 0: not known yet
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


def exempt(path):
    """Whether a request to this path is never refused: the health check. An
    orchestrator that sees it fail past capacity replaces a server that is
    only busy, and the others take its load."""
    return path.rstrip("/") == "/health"


def plain_get(head):
    """Whether bytes read from a connection between two requests are one
    whole GET head, HTTP/1.1, and nothing after it: no body, no Connection,
    no Upgrade, no Expect, not the health check. A server may answer such a
    request's refusal (KEPT_ALIVE) without parsing it, and keep the
    connection."""
    end = head.find(b"\r\n\r\n")
    if end < 0 or end + 4 != len(head):
        return False
    line, _, fields = head[:end].partition(b"\r\n")
    if not (line.startswith(b"GET ") and line.endswith(b" HTTP/1.1")):
        return False
    if exempt(line[4:-9].decode("latin-1")):
        return False
    fields = fields.lower()
    return not any(name in fields for name in NOT_PLAIN)


class Pace:
    """How fast a queue drains: the mean time between two takes from it while
    requests wait, which turns the requests queued into the wait of one queued
    now (gunicorn's threads taking from their worker's queue; the async apps'
    admitted requests getting their pool connection)."""

    def __init__(self):
        self.gap = 0.0
        self._last = None

    def took(self, now, waiting):
        """One was taken at now, `waiting` still queued behind it."""
        if self._last is not None and waiting:
            self.gap += HOLD_WEIGHT * (now - self._last - self.gap)
        self._last = now

    def wait(self, waiting):
        return waiting * self.gap


class Lag:
    """How late an event loop runs what is due: a timer set every TICK,
    whose lateness it hands to heard(seconds), each time it runs. Past an
    event loop's capacity its ready queue is where every request waits, a
    turn at a time, whatever its route: a request that gives its pool
    connection back to wait on other services (the ratings route) waits
    there, not at the pool. Node's toobusy and Fastify's under-pressure
    refuse on the same signal."""

    def __init__(self, loop, heard):
        self._loop = loop
        self._heard = heard
        self._due = loop.time() + TICK
        loop.call_at(self._due, self._tick)

    def _tick(self):
        now = self._loop.time()
        self._heard(now - self._due)
        self._due = now + TICK
        self._loop.call_at(self._due, self._tick)


def running_loop():
    """The event loop running here, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_ticket = contextvars.ContextVar("admission_ticket", default=None)


class Gate:
    """An async worker's admission, as each request reaches the app, before
    the framework (common/asgi.py's admitting for Quart, sanic_app's
    handle_request): the requests admitted and not yet past the queue (no
    pool connection yet, and not answered), and the pace at which they pass.
    An event loop reads every request it is sent and runs each in turn, so
    past capacity the queue is its own: every request admitted waits for the
    loop, then the pool. A newcomer that would wait past half the budget
    behind those ahead, in a queue that stands, is refused before it costs
    more than its parsing: half, since once past it shares the loop with the
    requests admitted behind it, and waits about as long again (Quart at
    twice its capacity, budget 50 ms: with the whole of it for the queue
    ahead, 20 % of its capacity answered in time; with 20 ms, 104 %).

    Nor can the requests open, admitted and not yet answered, pass a limit
    that the loop's lag sets (heard): a request that gives its connection
    back and waits on other services (the ratings route) no longer counts
    ahead, but its calls still take the loop's turns. The limit falls to
    BACKOFF of those open at each tick the loop runs later than its target
    (LAG_SHARE of the budget), and grows by one a tick on time; never below
    twice the pool's connections, nor LEAST_OPEN. A closed loop's clients
    share the workers unevenly (./benchmark.sh's 20 on two workers, a pool
    of 10 each, with the floor at one pool: Quart refused some on GET
    /films/), and a machine busy with other work runs a loop late too (four
    clients on one loop with a pool of one, floor two: one refused).

    A newcomer with fewer requests ahead of it than the worker's pool has
    connections is always admitted: a closed loop of that many clients,
    however heavy its route, queues for the CPU alone and never grows, and a
    client refused there asks again at once. (Quart under ./benchmark.sh's
    20 connections, 10 a worker, on GET /films/, about 6 ms of CPU each:
    without this, 45 % of its answers were refusals, and as many 200s a
    second as with none.)"""

    def __init__(self, budget, connections):
        self.seconds = budget / 2
        self.connections = connections  # the worker's pool's (POOL_MAX_SIZE)
        self.ahead = 0  # admitted, not yet passed
        self.open = 0  # admitted, not yet answered
        self.pace = Pace()
        self.standing = Standing(self.seconds)
        self.lag = None  # its event loop's Lag, from the first request admitted on it
        self.target = budget * LAG_SHARE  # the loop's lag past which the limit falls
        self.limit = math.inf  # the most requests open a newcomer may find
        # Never fewer than twice the pool's connections, nor than a gunicorn
        # worker's threads: fewer clients are a closed loop past no capacity
        # of the worker's (as gunicorn's crowded() in common/gthread.py),
        # however late they, or a machine that other work keeps busy, run
        # its loop.
        self.floor = max(2 * connections, LEAST_OPEN)

    def refuses(self):
        """Whether a newcomer is refused now (a server may ask before it
        parses the request: KEPT_ALIVE): with as many requests open as the
        loop's lag permits, or as many ahead of it as the pool has
        connections, in a queue that stands now."""
        if not self.seconds:
            return False
        if self.open > self.limit:
            return True
        if self.ahead < self.connections:
            return False
        if not self.standing.stands_now(time.monotonic()):
            return False
        return self.pace.wait(self.ahead + 1) >= self.seconds

    def heard(self, lag):
        """The loop ran a timer `lag` seconds late: past the target, the
        limit falls to a share of the requests open (never below its
        floor); within it, it grows by one while they use half of it."""
        if lag >= self.target:
            self.limit = max(self.floor, min(self.limit, self.open) * BACKOFF)
        elif self.open * 2 >= self.limit:
            self.limit += 1

    def admit(self, path="/"):
        """The request's Ticket, in its context (passed() finds it), or None:
        refused. A health check is never refused (exempt)."""
        if self.lag is None and self.seconds:
            loop = running_loop()
            self.lag = loop and Lag(loop, self.heard)
        if self.refuses() and not exempt(path):
            return None
        self.ahead += 1
        self.open += 1
        ticket = Ticket(self)
        _ticket.set(ticket)
        return ticket


class Ticket:
    """An admitted request's place in its Gate, until it passes."""

    __slots__ = ("_gate", "_open", "_at")

    def __init__(self, gate):
        self._gate = self._open = gate
        self._at = time.monotonic()

    def passed(self):
        """The request has its pool connection, or its answer: its wait is
        over (once; again does nothing)."""
        gate, self._gate = self._gate, None
        if gate is None:
            return
        now = time.monotonic()
        gate.ahead -= 1
        gate.pace.took(now, gate.ahead)
        gate.standing.record(now - self._at, now)

    def answered(self):
        """The request is answered, or its client gone: it has passed, and
        is no longer open (once; again does nothing)."""
        self.passed()
        gate, self._open = self._open, None
        if gate is not None:
            gate.open -= 1


def passed():
    """This request has its pool connection (the async PoolWrapper calls it):
    its Gate's wait, if it has one, is over."""
    ticket = _ticket.get()
    if ticket is not None:
        ticket.passed()
