"""The rating sources' HTTP client: one per worker process, opened with the
app, closed when the worker exits (as the pool: db.py)."""

import atexit

import httpx
from flask import current_app

from common.ratings import Sources, client_options


def init_app(app, settings):
    client = httpx.Client(**client_options(settings))
    app.extensions["sources"] = Sources(client, settings.upstream_fanout, settings.upstream_timeout)
    atexit.register(client.close)


def sources():
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return current_app.extensions["sources"]
