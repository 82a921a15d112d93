"""The ratings service's server: an asyncio Protocol per connection, HTTP/1.1
parsed by httptools (uvicorn's and Sanic's parser), keep-alive, and each
rating answered `delay` after its request arrived, in order on a connection.

A timer per connection, not a task per request: the service must cost far
less CPU than the apps that call it (upstream/__init__.py).
"""

import asyncio
import collections
import contextlib
import json
import random
import re
import time
from dataclasses import asdict, dataclass

import httptools

from upstream.watch import Watcher

RATING = re.compile(rb"/films/0*([0-9]{1,10})/rating/?")
INT4_MAX = 2**31 - 1  # a film id is a Postgres integer (common/contract.py)
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
NOT_FOUND = json.dumps({"error": "not found"}).encode()
METHOD_NOT_ALLOWED = json.dumps({"error": "method not allowed"}).encode()
MALFORMED = json.dumps({"error": "malformed HTTP request"}).encode()
READ_AHEAD = 100  # answers owed on one connection before it is read no further


@dataclass
class Stats:
    """What GET /stats answers: counts since the start, CPU time included,
    so that whoever reads it twice has the difference over a run; and the
    most at once since the last read, so that whoever reads it before and
    after a run has the run's worst (each read starts them again from what
    is open then)."""

    answered: int = 0  # ratings sent
    in_flight: int = 0  # ratings asked for, not yet sent
    most_in_flight: int = 0  # the most at once since the start
    peak_in_flight: int = 0  # the most at once since the last GET /stats
    abandoned: int = 0  # ratings whose connection closed before they were sent
    connections: int = 0  # open now
    most_connections: int = 0  # the most open at once since the start
    peak_connections: int = 0  # the most open at once since the last GET /stats
    cpu_seconds: float = 0.0  # this process's, user and system, since it listens
    saturated_seconds: int = 0  # seconds it ran late, or used most of a core (watch.py)
    saturated: bool = False  # the last second was one


def rating(film_id, port):
    """The rating a source (a port) gives a film: from 1.00 to 5.00, fixed."""
    return round(1 + (film_id * 2654435761 + port * 40503) % 401 / 100, 2)


@dataclass
class Owed:
    """An answer owed on a connection: when it is due, and what it is."""

    due: float
    status: int
    body: bytes | None  # None: the stats, made when sent
    keep_alive: bool
    head: bool
    counted: bool  # a rating: counted in flight until sent or abandoned
    http10: bool  # an HTTP/1.0 request: its keep-alive is said, not assumed


class Service:
    """What every connection shares: the delay, the counts, the servers."""

    def __init__(self, delay, seed=None):
        self.delay = delay  # infra.delays.Jittered
        self.random = random.Random(seed)
        self.stats = Stats()
        self.servers = []
        self.ports = []
        self.open = set()  # the connections: closed with the service
        self.loop = None
        self.cpu_at_start = time.process_time()

    async def listen(self, host, port):
        """Listen on host:port (0: a free port); the port it listens on."""
        self.loop = asyncio.get_running_loop()
        if not self.servers:  # not the imports': what serving costs
            self.cpu_at_start = time.process_time()
        server = await self.loop.create_server(lambda: Connection(self), host, port, backlog=4096)
        self.servers.append(server)
        self.ports.append(server.sockets[0].getsockname()[1])
        return self.ports[-1]

    @contextlib.contextmanager
    def watching(self):
        """Count saturated seconds, and say so on stderr, while in the block."""
        watcher = Watcher(self.loop, self.stats)
        watcher.start()
        try:
            yield watcher
        finally:
            watcher.stop()

    async def close(self):
        """Stop listening, and close every connection: a client's pooled one
        must not stay open to a service that is gone."""
        for server in self.servers:
            server.close()
        for connection in list(self.open):
            connection.transport.close()
        for server in self.servers:
            await server.wait_closed()

    def answer(self, method, target, port):
        """(seconds to wait, status, body or None for the stats) for a request."""
        path = target.split(b"?", 1)[0]
        match = RATING.fullmatch(path)
        known = match or path in (b"/stats", b"/stats/")
        if not known:
            return 0.0, 404, NOT_FOUND
        if method not in (b"GET", b"HEAD"):
            return 0.0, 405, METHOD_NOT_ALLOWED
        if not match:
            return 0.0, 200, None
        film_id = int(match[1])
        if not 0 < film_id <= INT4_MAX:
            return 0.0, 404, NOT_FOUND
        body = json.dumps({"film_id": film_id, "rating": rating(film_id, port)}).encode()
        return self.random.uniform(self.delay.low, self.delay.high), 200, body

    def stats_body(self):
        """What GET /stats answers; the peaks since the last read are folded
        into the most since the start, then start again from what is open."""
        stats = self.stats
        stats.cpu_seconds = time.process_time() - self.cpu_at_start
        stats.most_in_flight = max(stats.most_in_flight, stats.peak_in_flight)
        stats.most_connections = max(stats.most_connections, stats.peak_connections)
        document = {
            "ports": self.ports,
            "delay": str(self.delay),
            **asdict(stats),
            "cpu_us_per_answer": per_answer(stats),
        }
        stats.peak_in_flight, stats.peak_connections = stats.in_flight, stats.connections
        return json.dumps(document).encode()


def per_answer(stats):
    """CPU microseconds per rating sent, since the start; None before the first."""
    if not stats.answered:
        return None
    return round(stats.cpu_seconds / stats.answered * 1e6, 1)


class Connection(asyncio.Protocol):
    """One client connection: requests parsed as they arrive, answers written
    in order, each when it is due."""

    def __init__(self, service):
        self.service = service
        self.port = None  # the source it asks: the port it connected to
        self.parser = httptools.HttpRequestParser(self)
        self.target = b""
        self.owed = collections.deque()
        self.timer = None
        self.transport = None
        self.paused = False

    def connection_made(self, transport):
        self.transport = transport
        self.port = transport.get_extra_info("sockname")[1]
        self.service.open.add(self)
        stats = self.service.stats
        stats.connections += 1
        stats.peak_connections = max(stats.peak_connections, stats.connections)

    def data_received(self, data):
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self.owed.clear()
            self.transport.write(response(Owed(0, 400, MALFORMED, False, False, False, False)))
            self.transport.close()

    def connection_lost(self, exc):
        stats = self.service.stats
        stats.connections -= 1
        self.service.open.discard(self)
        if self.timer is not None:
            self.timer.cancel()
        abandoned = sum(owed.counted for owed in self.owed)
        stats.in_flight -= abandoned
        stats.abandoned += abandoned
        self.owed.clear()

    def eof_received(self):
        return False  # close the connection; what is owed is abandoned

    # httptools' callbacks
    def on_url(self, url):
        self.target += url

    def on_message_complete(self):
        target, self.target = self.target, b""
        method = self.parser.get_method()
        wait, status, body = self.service.answer(method, target, self.port)
        counted = status == 200 and body is not None
        if counted:
            stats = self.service.stats
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        keep_alive = self.parser.should_keep_alive()
        due = self.service.loop.time() + wait
        head = method == b"HEAD"
        http10 = self.parser.get_http_version() == "1.0"
        self.owed.append(Owed(due, status, body, keep_alive, head, counted, http10))
        if len(self.owed) > READ_AHEAD and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        if self.timer is None:
            self.timer = self.service.loop.call_at(self.owed[0].due, self.send_due)

    def send_due(self):
        """Write every answer that is due, in order; then wait for the next."""
        self.timer = None
        now = self.service.loop.time()
        stats = self.service.stats
        while self.owed and self.owed[0].due <= now:
            owed = self.owed.popleft()
            body = owed.body if owed.body is not None else self.service.stats_body()
            self.transport.write(response(owed, body))
            if owed.counted:
                stats.in_flight -= 1
                stats.answered += 1
            if not owed.keep_alive:
                self.transport.close()  # connection_lost abandons the rest
                return
        if self.paused and len(self.owed) <= READ_AHEAD:
            self.paused = False
            self.transport.resume_reading()
        if self.owed:
            self.timer = self.service.loop.call_at(self.owed[0].due, self.send_due)


def response(owed, body=None):
    """The bytes of an answer: JSON, its length, and whether it is the last."""
    body = owed.body if body is None else body
    lines = [
        f"HTTP/1.1 {owed.status} {REASONS[owed.status]}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    ]
    if owed.status == 405:
        lines.append("Allow: GET, HEAD")
    if not owed.keep_alive:
        lines.append("Connection: close")
    elif owed.http10:
        lines.append("Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if owed.head else body)
