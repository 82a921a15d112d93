"""The schedule and the connections: the open loop itself."""

import asyncio
import collections
from urllib.parse import urlsplit

import httptools

from .recorder import Recorder, clock, report

# A connection idle this long (s) is closed, not reused: well inside the
# servers' keep-alive timeouts (gunicorn's gthread: 2 s; uvicorn, Hypercorn:
# 5 s), so a server never closes a connection at the moment a request goes out
# on it (a false error: at 2 s, one in a few runs against gthread).
IDLE_LIMIT = 1.0


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one request at a time. Kept alive when
    the server allows; gunicorn's sync workers close after every answer."""

    def __init__(self, on_done, on_lost):
        self.on_done = on_done  # called with (connection, status or error kind)
        self.on_lost = on_lost  # called with (connection) when an idle one closes
        self.transport = None
        self.parser = None
        self.reusable = True
        self.idle_since = 0.0
        self.retry_after = False  # the answer carried Retry-After (a 503's hint)

    def connection_made(self, transport):
        self.transport = transport
        self.idle_since = clock()

    def data_received(self, data):
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, AttributeError):  # garbage, or data unasked for
            self.reusable = False
            self.finish("socket")

    def connection_lost(self, exc):
        self.transport = None
        self.reusable = False
        if self.parser is not None:
            self.finish("socket")
        else:
            self.on_lost(self)

    def send(self, payload):
        self.parser = httptools.HttpResponseParser(self)
        self.retry_after = False
        self.transport.write(payload)

    # httptools callbacks. on_header costs about 0.5 us an answer (measured:
    # 1.4 us a parse with it, 0.8-1.1 without), a percent of the generator's own.
    def on_header(self, name, value):
        if name.lower() == b"retry-after":
            self.retry_after = True

    def on_message_complete(self):
        self.reusable = self.parser.should_keep_alive()
        self.finish(self.parser.get_status_code())

    def finish(self, outcome):
        if self.parser is None:
            return  # already finished (a timeout, then the answer)
        self.parser = None
        self.on_done(self, outcome)

    def close(self):
        self.reusable = False
        if self.transport is not None:
            self.transport.close()


class Load:
    """The schedule, the connections, the queue of due requests.

    Connections open on demand, up to `connections`, and carry a request as
    soon as they are open: an idle connection that a gunicorn sync worker has
    accepted would hold that worker while it waits for a request."""

    def __init__(
        self, url, rate, connections, duration, method, body, timeout, headers=None,
        phases=None, objective_ms=None,
    ):  # fmt: skip
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.payload = request_bytes(method, parts, body, headers or {})
        # The schedule: [(seconds, rate)], one phase after the other; one
        # rate for the duration is a schedule of one phase.
        self.phases = list(phases or [(duration, rate)])
        self.duration = sum(seconds for seconds, _ in self.phases)
        if phases:  # the rate it reports: the schedule's mean
            rate = sum(round(r * s) for s, r in self.phases) / self.duration
        self.rate = rate
        self.connections, self.timeout = connections, timeout
        self.objective_ms = objective_ms  # per second, the 2xx within it (goodput)
        self.idle = []  # open connections without a request, most recent last
        self.opening = 0
        self.open_count = 0  # open or opening
        self.waiting = collections.deque()  # intended times of due requests
        self.in_flight = {}  # connection -> (intended, sent_at, timer)
        self.loop = None
        self.recorder = None

    async def connect(self):
        """A new Connection; OSError (or TimeoutError) if the server is not there."""
        _, connection = await asyncio.wait_for(
            self.loop.create_connection(
                lambda: Connection(self.done, self.lost), self.host, self.port
            ),
            self.timeout,
        )
        return connection

    async def run(self):
        """Release the schedule, wait for the answers, report. OSError if the
        server cannot be reached at the start."""
        self.loop = asyncio.get_running_loop()
        self.idle.append(await self.connect())  # the first request's
        self.open_count = 1
        start = clock() + 0.01
        self.recorder = Recorder(start, self.duration, self.objective_ms)
        self.recorder.opened = 1
        total = 0
        for offset in schedule(self.phases):
            intended = start + offset
            delay = intended - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            self.release(intended)
            total += 1
        # Every released request ends: answered, failed, or timed out (sent or
        # still waiting), so the 2xx count is exact for a nothing-lost ledger.
        while self.waiting or self.in_flight:
            self.expire_waiting()
            await asyncio.sleep(0.01)
        for connection in self.idle:
            connection.close()
        return report(self.recorder, self, total, start)

    def release(self, intended):
        """Send a due request on an idle connection, or queue it for one."""
        now = clock()
        self.recorder.released(intended, now)
        while self.idle and now - self.idle[-1].idle_since > IDLE_LIMIT:
            self.idle.pop().close()  # and every one below it: they idled longer
            self.open_count -= 1
        if self.idle:
            self.send(self.idle.pop(), intended)
        else:
            self.waiting.append(intended)
            self.open_more()

    def open_more(self):
        """Open connections for the waiting requests, within the limit."""
        while self.open_count < self.connections and self.opening < len(self.waiting):
            self.open_count += 1
            self.opening += 1
            self.loop.create_task(self.open_one())

    async def open_one(self):
        try:
            connection = await self.connect()
        except (OSError, TimeoutError):
            self.recorder.failed("connect")
            await asyncio.sleep(0.1)  # not a busy loop while the server is gone
            self.opening -= 1
            self.open_count -= 1
            self.open_more()
            return
        self.opening -= 1
        self.recorder.opened += 1
        self.next_for(connection)

    def send(self, connection, intended):
        now = clock()
        timer = self.loop.call_later(self.timeout, self.expire, connection)
        self.in_flight[connection] = (intended, now, timer)
        self.recorder.sent_on_wire += 1
        connection.send(self.payload)

    def expire(self, connection):
        connection.reusable = False  # an answer may still come
        connection.finish("timeout")

    def done(self, connection, outcome):
        intended, sent_at, timer = self.in_flight.pop(connection)
        timer.cancel()
        if isinstance(outcome, int):
            self.recorder.answered(outcome, intended, sent_at, clock(), connection.retry_after)
        else:
            self.recorder.failed(outcome, intended)
        if connection.reusable:
            self.next_for(connection)
        else:
            connection.close()
            self.open_count -= 1
            self.open_more()

    def lost(self, connection):
        """An idle connection closed (the server's keep-alive timeout)."""
        if connection in self.idle:
            self.idle.remove(connection)
            self.open_count -= 1

    def next_for(self, connection):
        self.expire_waiting()
        if self.waiting:
            self.send(connection, self.waiting.popleft())
        else:
            connection.idle_since = clock()
            self.idle.append(connection)

    def expire_waiting(self):
        """Requests that waited for a connection longer than the timeout fail
        as not_sent: a client would have given up on them."""
        now = clock()
        while self.waiting and now - self.waiting[0] > self.timeout:
            self.recorder.failed("not_sent", self.waiting.popleft())


def schedule(phases):
    """Each request's due time, in seconds from the start: phase after phase
    [(seconds, rate)], request i of a phase at its start + i / rate, round(rate
    x seconds) of them (one phase: request i at i / rate, as ever)."""
    begin = 0.0
    for seconds, rate in phases:
        for index in range(round(rate * seconds)):
            yield begin + index / rate
        begin += seconds


def request_bytes(method, parts, body, headers=None):
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    data = (body or "").encode()
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data
