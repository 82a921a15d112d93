"""Rating sources for the tests of GET /films/<film_id>/ratings/, on ports an
app was told of (UPSTREAM_FANOUT): `with sources(ports, "up", "slow", "down"):`.
"up" and "slow" are the upstream's own service (upstream/server.py) in a
thread of the test process, "failing" a server that answers 500, "down"
nothing (a refused connection). The HOSTILE kinds try to steer or hold the
app that asks them: "redirect-away" sends it to ELSEWHERE (another upstream,
which would answer a rating), "redirect-loop" back to itself, "endless"
sends a body that never ends, a few bytes at a time, "trickle" a head that
never ends, a byte at a time, "large" a 10 MB rating (valid JSON: only its
size is wrong)."""

import contextlib
import re
import socketserver
import threading
import time

from infra.ports import free_port
from tests.helpers import query
from tests.upstream_thread import UpstreamThread
from upstream.server import rating

SLOW = "3s"  # a slow source's delay: past any test's UPSTREAM_TIMEOUT, within its patience
HOSTILE = ("redirect-away", "redirect-loop", "endless", "trickle", "large")
ELSEWHERE = "elsewhere"  # sources()' key of the upstream redirect-away points at
ENDLESS_FOR = 30.0  # seconds an endless body or head goes on at most: bounds the test, not the app


class Scripted(socketserver.ThreadingTCPServer):
    """A source that answers every request as its handler says, and keeps
    the targets it was asked (a list: appended to from each handler's thread)."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, port, handler, elsewhere=None):
        super().__init__(("127.0.0.1", port), handler)
        self.elsewhere = elsewhere  # the URL redirect-away sends to
        self.targets = []
        self.stopping = threading.Event()
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.stopping.set()
        self.shutdown()
        self.server_close()


class Answer(socketserver.StreamRequestHandler):
    """Reads the request's head, then answer(target) on the socket; a client
    that leaves mid-answer ends it."""

    def handle(self):
        line = self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b""):
            pass
        target = line.split(b" ")[1].decode() if line.count(b" ") == 2 else "/"
        self.server.targets.append(target)
        try:
            self.answer(target)
        except OSError:  # the app closed the connection: what it should do
            pass

    def send(self, status, headers, body=b""):
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.wfile.write(f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body)


class Answer500(Answer):
    def answer(self, target):
        self.send("500 Internal Server Error", {"Content-Length": 2, "Connection": "close"}, b"{}")


class RedirectAway(Answer):
    def answer(self, target):
        away = {"Location": self.server.elsewhere + target, "Content-Length": 0}
        self.send("302 Found", away)


class RedirectLoop(Answer):
    def answer(self, target):
        self.send("301 Moved Permanently", {"Location": target, "Content-Length": 0})


class Endless(Answer):
    """200, chunked, 8 spaces every 10 ms: a body that ends only when the app
    leaves (or after ENDLESS_FOR, or when the test stops the source)."""

    def answer(self, target):
        self.send("200 OK", {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        until = time.monotonic() + ENDLESS_FOR
        while time.monotonic() < until and not self.server.stopping.wait(0.01):
            self.wfile.write(b"8\r\n        \r\n")


class Trickle(Answer):
    """200, then a header whose value never ends, a space every 10 ms: each
    read of the head gets a byte well within any timeout on one read."""

    def answer(self, target):
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: ")
        until = time.monotonic() + ENDLESS_FOR
        while time.monotonic() < until and not self.server.stopping.wait(0.01):
            self.wfile.write(b" ")


class Large(Answer):
    """200, the film's rating padded with spaces to 10 MB: valid JSON, a
    rating but for its size."""

    SIZE = 10 * 2**20

    def answer(self, target):
        film_id = int(re.search(r"/films/(\d+)/", target)[1])
        document = f'{{"film_id": {film_id}, "rating": 4}}'.encode()
        headers = {"Content-Type": "application/json", "Content-Length": self.SIZE}
        self.send("200 OK", headers, document)
        padding = b" " * 2**16
        for _ in range((self.SIZE - len(document)) // len(padding)):
            self.wfile.write(padding)
        self.wfile.write(b" " * ((self.SIZE - len(document)) % len(padding)))


SCRIPTED = {
    "failing": Answer500,
    "redirect-away": RedirectAway,
    "redirect-loop": RedirectLoop,
    "endless": Endless,
    "trickle": Trickle,
    "large": Large,
}


@contextlib.contextmanager
def sources(ports, *kinds):
    """Each port as its kind says, for the block; yields {port: its server}
    of those that run one (an UpstreamThread for up and slow, a Scripted for
    the others), and {ELSEWHERE: an UpstreamThread} with redirect-away."""
    with contextlib.ExitStack() as cleanup:
        servers = {}
        for port, kind in zip(ports, kinds, strict=True):
            if kind in ("up", "slow"):
                delay = "0" if kind == "up" else SLOW
                servers[port] = cleanup.enter_context(UpstreamThread([port], delay))
            elif kind in SCRIPTED:
                elsewhere = None
                if kind == "redirect-away":
                    servers[ELSEWHERE] = cleanup.enter_context(UpstreamThread([free_port()]))
                    elsewhere = servers[ELSEWHERE].urls[0]
                servers[port] = Scripted(port, SCRIPTED[kind], elsewhere)
                cleanup.callback(servers[port].close)
            elif kind != "down":
                raise ValueError(f"not a kind of source: {kind!r}")
        yield servers


def expected(db, film_id, ports, kinds):
    """The contract's answer for film_id when the sources on ports are of
    these kinds: each "up" one's rating, None for the others."""
    [(title, year, count, average)] = query(
        db,
        """SELECT f.title, f.release_year, count(r.review_id), round(avg(r.rating), 2)::float8
             FROM film f LEFT JOIN review r USING (film_id)
            WHERE f.film_id = %s GROUP BY f.film_id""",
        film_id,
    )
    ratings = {
        f"http://127.0.0.1:{port}": rating(film_id, port) if kind == "up" else None
        for port, kind in zip(ports, kinds, strict=True)
    }
    return {
        "film_id": film_id,
        "release_year": year,
        "title": title,
        "reviews": {"count": count, "average": average},
        "ratings": ratings,
        "unavailable": [url for url, value in ratings.items() if value is None],
    }
