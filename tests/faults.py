"""What the fault tests share: a Postgres of their own, raw HTTP, a load of
reviews with its ledger, nginx when it is installed.

Everything here talks to 127.0.0.1 only, and is bounded in time.
"""

import asyncio
import collections
import contextlib
import dataclasses
import http.client
import json
import os
import resource
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from db import embedded
from infra import procfs
from tests.system_tools import system_tool
from tools import proxy

REVIEW = json.dumps({"film_id": 995, "rating": 4}).encode()


def nginx():
    """nginx's path (tests/system_tools.py: where it is missing the test skips
    or fails)."""
    return system_tool("nginx")


def behind_proxy(server, log_dir):
    """Yield a copy of the conftest Server whose url is nginx's, in front of it."""
    nginx()
    port = embedded.free_port()
    app_port = int(server.url.rsplit(":", 1)[1])
    with open(log_dir / f"nginx-{server.app}-{port}.log", "w") as log:
        handle = proxy.start(app_port, port, log)
    try:
        yield dataclasses.replace(server, url=f"http://127.0.0.1:{port}")
    finally:
        proxy.stop(handle)


class Postgres:
    """A second embedded server in data_dir, on a fixed port, so that a test
    may stop, restart or freeze it without touching the shared test database."""

    def __init__(self, data_dir, database="dvdrental_faults"):
        self.data_dir = Path(data_dir)
        self.database = database
        self.port = 0

    def start(self):
        url = embedded.start(database=self.database, data_dir=self.data_dir, port=self.port)
        self.port = embedded.running_port(self.data_dir)
        return url

    def stop(self):
        embedded.stop(self.data_dir)

    def pids(self):
        """The postmaster and every process it started (backends, workers)."""
        postmaster = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        return procfs.tree(postmaster)

    def freeze(self):
        """SIGSTOP: the server accepts TCP connections (the kernel does) and
        answers nothing, as a hung host or a stalled disk would."""
        for pid in self.pids():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self):
        for pid in self.pids():
            os.kill(pid, signal.SIGCONT)


@dataclass
class Response:
    status: int
    headers: dict
    body: bytes
    seconds: float

    def json(self):
        return json.loads(self.body)


def raw(port, data, timeout=10.0):
    """Send bytes as they are to 127.0.0.1:port; the parsed response, or None
    if the server closed the connection without one. TimeoutError if none
    comes within `timeout` seconds."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused early: its answer may be waiting
        response = http.client.HTTPResponse(sock)
        try:
            response.begin()
            body = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            return None
        headers = {name.lower(): value for name, value in response.getheaders()}
        return Response(response.status, headers, body, time.monotonic() - started)


@dataclass
class Ledger:
    """What a load of POST /reviews/ got: the ids answered 201, the other
    statuses, and the requests that got no answer (in flight when it broke)."""

    created: set = field(default_factory=set)
    statuses: dict = field(default_factory=dict)
    unanswered: int = 0
    slowest: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, status, body, seconds):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.slowest = max(self.slowest, seconds)
            if status == 201:
                self.created.add(json.loads(body)["review_id"])

    def lost(self):
        with self.lock:
            self.unanswered += 1


def post_reviews(port, ledger, stop, path="/reviews/"):
    """One client: POSTs over a keep-alive connection until `stop` is set,
    reconnecting after a failure."""
    connection = None
    while not stop.is_set():
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        started = time.monotonic()
        try:
            connection.request("POST", path, REVIEW, {"Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
        except ConnectionRefusedError:
            connection = None
            time.sleep(0.05)  # the server is not listening: nothing was sent
            continue
        except (OSError, http.client.HTTPException):
            # Sent, and no answer: possibly stored. Counted, then reconnect.
            ledger.lost()
            connection.close()
            connection = None
            time.sleep(0.05)
            continue
        ledger.record(response.status, body, time.monotonic() - started)
        if response.getheader("Connection", "").lower() == "close":
            connection.close()
            connection = None
    if connection is not None:
        connection.close()


class Load:
    """`clients` threads posting reviews, for a with block."""

    def __init__(self, port, clients=8):
        self.ledger = Ledger()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=post_reviews, args=(port, self.ledger, self._stop))
            for _ in range(clients)
        ]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self.ledger

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def stored_reviews(connection):
    with connection.cursor() as cursor:
        cursor.execute("SELECT review_id FROM review")
        return {row[0] for row in cursor.fetchall()}


def get(port, path, timeout=15.0):
    """GET over a new connection: Response, or None without an answer."""
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    return raw(port, request.encode(), timeout)


def post(port, body, timeout=15.0, key=None):
    """POST /reviews/ over a new connection, with key as its Idempotency-Key if
    there is one: Response, or None without an answer."""
    head = f"POST /reviews/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}"
    if key is not None:
        head += f"\r\nIdempotency-Key: {key}"
    return raw(port, f"{head}\r\n\r\n".encode() + body, timeout)


def wait_for(condition, timeout, interval=0.2):
    """Poll condition() until it is true; False after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


def raise_file_limit(needed):
    """Raise this process's soft limit on open files to `needed` (up to the hard
    limit): the connection tests hold thousands of sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        ceiling = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


@contextlib.contextmanager
def held_connections(port, count, request=b"", receive_buffer=None):
    """`count` connections to 127.0.0.1:port, each sent `request` (nothing: an
    idle client), never read, held for the with block, then closed."""
    raise_file_limit(count + 512)
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sockets.append(sock)
            if receive_buffer:  # a small window: the server's send blocks sooner
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.settimeout(10)
            sock.connect(("127.0.0.1", port))
            if request:
                sock.sendall(request)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def burst(port, count, path="/films/995/", timeout=60.0):
    """`count` clients connect at once and GET path: {outcome: clients}, the
    outcome a status ("200") or what went wrong ("reset", "timeout", ...)."""
    raise_file_limit(count + 512)

    async def one():
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port), timeout
            )
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            answer = await asyncio.wait_for(reader.read(), timeout)
            writer.close()
        except (ConnectionResetError, BrokenPipeError):
            return "reset"
        except TimeoutError:
            return "timeout"
        except OSError as error:
            return type(error).__name__
        return answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "closed"

    async def all_at_once():
        return await asyncio.gather(*(one() for _ in range(count)))

    return dict(collections.Counter(asyncio.run(all_at_once())))
