"""The rating sources as the sync apps ask them: one httpx.Client per worker
process, its calls one after another (flask_app and falcon_app's ratings.py).
common/async_sources.py is its twin for the async apps, with the same shape:
what differs between the two is the migration's lesson, the rest is in
common/ratings.py."""

import time

import httpx

from common.ratings import FAILED, KEEPALIVE, MAX_CONNECTIONS, TIMED_OUT, rating_of, rating_url


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
        # from the environment (trust_env: no HTTP_PROXY, no .netrc).
        limits = httpx.Limits(
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_CONNECTIONS,
            keepalive_expiry=KEEPALIVE,
        )
        timeout = httpx.Timeout(self.timeout)
        self.client = httpx.Client(timeout=timeout, limits=limits, trust_env=False)
        return self

    def deadline(self):
        """When a fan-out that begins now must have ended."""
        return time.monotonic() + self.timeout

    def fetch_rating(self, source, film_id, deadline):
        """One source's rating of the film, or TIMED_OUT, or FAILED. Past the
        deadline the source is not asked; before it, each phase of the call
        (connecting, sending, each read) waits at most what is left of it."""
        left = deadline - time.monotonic()
        if left <= 0:
            return TIMED_OUT
        try:
            response = self.client.get(rating_url(source, film_id), timeout=left)
        except httpx.TimeoutException:
            return TIMED_OUT
        except httpx.HTTPError:  # refused, reset, not HTTP
            return FAILED
        return rating_of(response.status_code, response.content, film_id)

    def close(self):
        self.client.close()
