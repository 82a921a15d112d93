"""What the fault tests share: a Postgres of their own, raw HTTP, a load of
reviews with its ledger, nginx when it is installed.

Everything here talks to 127.0.0.1 only, and is bounded in time.
"""

import asyncio
import collections
import contextlib
import dataclasses
import http.client
import itertools
import json
import os
import resource
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import contract
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
    """What a load got: the ids answered 201, every status, the error answers
    ({(status, message)}: the few distinct ones), the requests that got no
    answer (in flight when it broke), and each Idempotency-Key sent with the id
    its 201 answered (None until one did)."""

    created: set = field(default_factory=set)
    statuses: dict = field(default_factory=dict)
    errors: set = field(default_factory=set)
    keys: dict = field(default_factory=dict)
    unanswered: int = 0
    slowest: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, status, body, seconds, key=None):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.slowest = max(self.slowest, seconds)
            review_id = json.loads(body)["review_id"] if status == 201 else None
            if review_id is not None:
                self.created.add(review_id)
            if status >= 400:
                self.errors.add((status, message(body)))
            if key is not None:
                self.keys[key] = review_id

    def lost(self, key=None):
        with self.lock:
            self.unanswered += 1
            if key is not None:
                self.keys[key] = None


def message(body):
    """The contract's error message in body, or the body itself where it is not one."""
    try:
        return json.loads(body)["error"]
    except (ValueError, TypeError, KeyError):
        return body[:200]


def client(port, ledger, stop, method="POST", path="/reviews/", keys=None):
    """One client: sends its request (POST: a review) over a keep-alive
    connection until `stop` is set, reconnecting after a failure. keys: an
    iterator of Idempotency-Keys, one a review, each sent again after a 503 or
    no answer until another answer comes, as the contract tells a client to."""
    connection = None
    body = REVIEW if method == "POST" else None
    key = next(keys) if keys else None
    while not stop.is_set():
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Idempotency-Key"] = key
        started = time.monotonic()
        try:
            connection.request(method, path, body, headers)
            response = connection.getresponse()
            answer = response.read()
        except ConnectionRefusedError:
            connection = None
            time.sleep(0.05)  # the server is not listening: nothing was sent
            continue
        except (OSError, http.client.HTTPException):
            # Sent, and no answer: possibly stored. Counted, then reconnect.
            ledger.lost(key)
            connection.close()
            connection = None
            time.sleep(0.05)
            continue
        ledger.record(response.status, answer, time.monotonic() - started, key)
        if key is not None and response.status == 503:
            time.sleep(0.05)  # a client's pause before it sends the key again
        elif key is not None:
            key = next(keys)
        if response.getheader("Connection", "").lower() == "close":
            connection.close()
            connection = None
    if connection is not None:
        connection.close()


class Load:
    """For a with block: `clients` threads posting reviews, `keyed` more
    posting each review with a key of its own (retried until answered), and
    `readers` threads GETting read_path."""

    def __init__(self, port, clients=8, keyed=0, readers=0, read_path="/films/995/"):
        self.ledger = Ledger()
        self._stop = threading.Event()
        requests = [("POST", "/reviews/", None)] * clients
        requests += [("POST", "/reviews/", key_series(f"load-{n}")) for n in range(keyed)]
        requests += [("GET", read_path, None)] * readers
        self._threads = [
            threading.Thread(target=client, args=(port, self.ledger, self._stop, *request))
            for request in requests
        ]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self.ledger

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def key_series(prefix):
    return (f"{prefix}-{n}" for n in itertools.count())


def assert_ledger_holds(port, ledger, connection, in_flight=0):
    """What a load's writes promise, read from the database (the reviews of
    REVIEW's film): every key sent is one review, the one its 201 named,
    once each key the load left without a 201 (it stopped first) is sent
    again; every review answered 201 without a key is stored, and at most
    `in_flight` more (written by requests in flight at a fault, whose 503 or
    lost answer is ambiguous: docs/contract.md)."""
    for key in [key for key, review_id in ledger.keys.items() if review_id is None]:
        retry = post(port, REVIEW, key=key)
        assert retry is not None and retry.status == 201, (key, retry)
        ledger.keys[key] = retry.json()["review_id"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT review_id, idempotency_key FROM review WHERE film_id = %s",
            (json.loads(REVIEW)["film_id"],),
        )
        rows = cursor.fetchall()
    keyed = {key: review_id for review_id, key in rows if key is not None}
    assert keyed == ledger.keys, "a key is not the one review its 201 named"
    plain = {review_id for review_id, key in rows if key is None}
    answered = ledger.created - set(keyed.values())
    assert answered <= plain, f"answered 201, not stored: {sorted(answered - plain)[:10]}"
    assert len(plain - answered) <= in_flight, f"{len(plain - answered)} stored without a 201"


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
    outcome a status ("200"; "503 overloaded": refused by admission,
    common/admission.py) or what went wrong ("reset", "timeout", ...)."""
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
        if not answer.startswith(b"HTTP/"):
            return "closed"
        status = answer.split(b" ", 2)[1].decode()
        overloaded = status == "503" and contract.OVERLOADED.encode() in answer
        return f"{status} overloaded" if overloaded else status

    async def all_at_once():
        return await asyncio.gather(*(one() for _ in range(count)))

    return dict(collections.Counter(asyncio.run(all_at_once())))
