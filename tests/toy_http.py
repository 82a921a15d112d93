"""A toy HTTP/1.1 server of known behaviour, for the tests of the instruments
that measure past capacity (tests/harness/test_overload.py, test_spike.py):
each answers GETs (no body) its own way; this holds what they share: the
connection, the answer's bytes, and the server on its own event loop in a
thread. Also what a GET run reads of the run's database when there is none."""

import asyncio
import threading

import uvloop

REFUSED = (b"503 Service Unavailable", b"Retry-After: 1\r\n")  # as the apps' admission
# The environment of a Results made of these servers' records.
ENVIRONMENT = {"cpu_count": 2, "cpu_model": "a CPU", "date": "2026-11-28T12:00", "git_commit": None}


class Connection(asyncio.Protocol):
    """One connection: request(), each time a request has arrived, answers it
    with write(); a subclass says how."""

    def __init__(self, server):
        self.server, self.buffer, self.transport = server, b"", None

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        self.transport = None

    def data_received(self, data):
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:  # GETs: no body
            _, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self.request()

    def request(self):
        raise NotImplementedError

    def write(self, status, headers=b""):
        if self.transport is not None:
            body = b'{"ok": true}'
            self.transport.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n" % len(body) + headers + b"\r\n" + body
            )


class ThreadedServer:
    """The server on its own event loop, in a thread: `with Server() as s:`
    s.url. A subclass names its CONNECTION class, and keeps its own state."""

    CONNECTION = Connection
    BACKLOG = 100

    def __init__(self):
        self.loop = uvloop.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.url = None

    def run(self):
        server = self.loop.run_until_complete(
            self.loop.create_server(
                lambda: self.CONNECTION(self), "127.0.0.1", 0, backlog=self.BACKLOG
            )
        )
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            server.close()
            self.loop.run_until_complete(server.wait_closed())
            self.loop.close()

    def __enter__(self):
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class NoDatabase:
    """What a GET run reads of the run's database: nothing (no connections watched)."""

    url = postmaster = film = None

    def clear(self, settle=False):
        pass
