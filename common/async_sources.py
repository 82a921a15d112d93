"""The rating sources as the async apps ask them: one aiohttp.ClientSession
per worker process, its calls all at once (quart_app and sanic_app's
ratings.py). The twin of common/sources.py, with the same shape; what is
shared by both is in common/ratings.py."""

import asyncio

import aiohttp

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
    connections). The client's connections belong to the event loop that
    opened them: open it on the server's loop, when the worker starts serving."""

    def __init__(self, settings):
        self.urls = settings.upstream_fanout
        self.timeout = settings.upstream_timeout
        self.client = None

    async def open(self):
        """Open the client; returns self."""
        # As the sync client: a call bounded by UPSTREAM_TIMEOUT in all, the
        # same connection limits, nothing from the environment, the body as
        # it arrives (auto_decompress: nothing inflated).
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        self.client = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            trust_env=False,
            headers=HEADERS,
            auto_decompress=False,
        )
        return self

    def deadline(self):
        """When a fan-out that begins now must have ended (the loop's clock)."""
        return asyncio.get_running_loop().time() + self.timeout

    async def fetch_rating(self, source, film_id, deadline):
        """One source's rating of the film, or TIMED_OUT, or FAILED. The whole
        call, connecting included, ends by the deadline (asyncio.timeout_at).
        A redirect is not followed (aiohttp would follow ten): a source's
        answer, not another host's, as the sync client's."""
        try:
            async with asyncio.timeout_at(deadline):
                url = rating_url(source, film_id)
                async with self.client.get(url, allow_redirects=False) as response:
                    body = bytearray()
                    async for chunk in response.content.iter_any():
                        body += chunk
                        if len(body) > MAX_BODY:
                            return FAILED
        except TimeoutError:  # aiohttp's own timeouts are TimeoutErrors too
            return TIMED_OUT
        except aiohttp.ClientError:  # refused, reset, not HTTP
            return FAILED
        return rating_of(response.status, body, film_id)

    async def close(self):
        await self.client.close()
