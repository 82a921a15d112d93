"""Rating sources for the tests of GET /films/<film_id>/ratings/, on ports an
app was told of (UPSTREAM_FANOUT): `with sources(ports, "up", "slow", "down"):`.
"up" and "slow" are the upstream's own service (upstream/server.py) in a
thread of the test process, "failing" a server that answers 500, "down"
nothing (a refused connection)."""

import contextlib
import socketserver
import threading

from tests.helpers import query
from tests.upstream_thread import UpstreamThread
from upstream.server import rating

SLOW = "3s"  # a slow source's delay: past any test's UPSTREAM_TIMEOUT, within its patience


class Failing(socketserver.ThreadingTCPServer):
    """A source that answers every request 500, as a broken service does."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, port):
        super().__init__(("127.0.0.1", port), Answer500)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.shutdown()
        self.server_close()


class Answer500(socketserver.StreamRequestHandler):
    def handle(self):
        while self.rfile.readline() not in (b"\r\n", b""):
            pass
        self.wfile.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n")
        self.wfile.write(b"Connection: close\r\n\r\n{}")


@contextlib.contextmanager
def sources(ports, *kinds):
    """Each port as its kind says, for the block; yields {port: UpstreamThread}
    of those that run the upstream."""
    with contextlib.ExitStack() as cleanup:
        upstreams = {}
        for port, kind in zip(ports, kinds, strict=True):
            if kind in ("up", "slow"):
                delay = "0" if kind == "up" else SLOW
                upstreams[port] = cleanup.enter_context(UpstreamThread([port], delay))
            elif kind == "failing":
                cleanup.callback(Failing(port).close)
            elif kind != "down":
                raise ValueError(f"not a kind of source: {kind!r}")
        yield upstreams


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
