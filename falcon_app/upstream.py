"""The rating sources' HTTP client: one per worker process, opened with the
app, closed when the worker exits (as the pool: db.py)."""

import atexit

import httpx

from common.ratings import Sources, client_options


def open_sources(settings):
    """The Sources, their client open, and closed when the worker process exits.

    The Ratings resource keeps them: its calls share the client's connections.
    """
    client = httpx.Client(**client_options(settings))
    atexit.register(client.close)
    return Sources(client, settings.upstream_fanout, settings.upstream_timeout)
