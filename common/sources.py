"""The rating sources as the sync apps ask them: one httpx.Client per worker
process, its calls one after another (flask_app and falcon_app's ratings.py).
common/async_sources.py is its twin for the async apps, with the same shape:
what differs between the two is the migration's lesson, the rest is in
common/ratings.py."""

import threading
import time

import httpcore
import httpx

from common.ratings import (
    FAILED,
    HEADERS,
    KEEPALIVE,
    MAX_BODY,
    MAX_CONNECTIONS,
    TIMED_OUT,
    rating_of,
    rating_url,
)


class Sources:
    """The rating sources a worker asks (UPSTREAM_FANOUT, in the answer's
    order), the fan-out's timeout (UPSTREAM_TIMEOUT, in seconds), and the one
    client it asks them with, from open() to close() (as the PoolWrapper's
    connections)."""

    def __init__(self, settings):
        self.urls = settings.upstream_fanout
        self.timeout = settings.upstream_timeout
        self.client = None

    def open(self):
        """Open the client; returns self."""
        # Every phase of a call (connect, write, each read, the wait for a
        # pooled connection) is bounded by UPSTREAM_TIMEOUT, and nothing comes
        # from the environment (trust_env: no HTTP_PROXY, no .netrc). A
        # redirect is not followed: a source's answer, not another host's.
        limits = httpx.Limits(
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_CONNECTIONS,
            keepalive_expiry=KEEPALIVE,
        )
        timeout = httpx.Timeout(self.timeout)
        transport = httpx.HTTPTransport(limits=limits)
        # httpx 0.28 takes no network backend of its own (encode/httpx#3180):
        # its connection pool's, which every connection it opens reads with.
        transport._pool._network_backend = Bounded()
        self.client = httpx.Client(
            timeout=timeout,
            transport=transport,
            trust_env=False,
            follow_redirects=False,
            headers=HEADERS,
        )
        return self

    def deadline(self):
        """When a fan-out that begins now must have ended."""
        return time.monotonic() + self.timeout

    def fetch_rating(self, source, film_id, deadline):
        """One source's rating of the film, or TIMED_OUT, or FAILED. Past the
        deadline the source is not asked; before it, each phase of the call
        (connecting, sending, each read of the head and the body) waits at
        most what is left of it: httpx bounds each read, not the call, and a
        source sending a byte at a time would hold the request's thread for
        as long as it went on."""
        left = deadline - time.monotonic()
        if left <= 0:
            return TIMED_OUT
        _call.deadline = deadline
        try:
            with self.client.stream("GET", rating_url(source, film_id), timeout=left) as response:
                body = bytearray()
                for chunk in response.iter_raw():  # as it arrives, not inflated
                    body += chunk
                    if len(body) > MAX_BODY:
                        return FAILED
        except httpx.TimeoutException:
            return TIMED_OUT
        except httpx.HTTPError:  # refused, reset, not HTTP
            return FAILED
        finally:
            _call.deadline = None
        return rating_of(response.status_code, body, film_id)

    def close(self):
        self.client.close()


_call = threading.local()  # the deadline of the call this thread makes, if any


class Bounded(httpcore.SyncBackend):
    """httpcore's sockets, each read and write waiting at most until the
    deadline of the call its thread is making (a thread makes one at a time)."""

    def connect_tcp(self, *args, **kwargs):
        return BoundedStream(super().connect_tcp(*args, **kwargs))


class BoundedStream(httpcore.NetworkStream):
    def __init__(self, stream):
        self.stream = stream

    def read(self, max_bytes, timeout=None):
        return self.stream.read(max_bytes, bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer, timeout=None):
        self.stream.write(buffer, bounded(timeout, httpcore.WriteTimeout))

    def close(self):
        self.stream.close()

    def start_tls(self, *args, **kwargs):
        return BoundedStream(self.stream.start_tls(*args, **kwargs))

    def get_extra_info(self, info):
        return self.stream.get_extra_info(info)


def bounded(timeout, late):
    """The timeout of one read or write: the one asked, cut to what is left
    of the thread's call; past its deadline, `late` is raised."""
    deadline = getattr(_call, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise late(f"past the fan-out's deadline by {-left:.3f}s")
    return left if timeout is None else min(timeout, left)
