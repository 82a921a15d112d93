"""The rating sources' HTTP client: one per worker process, opened and closed
as the pool is (db.py)."""

import atexit

from flask import current_app

from common.sources import Sources


def init_app(app, settings):
    fan_out = Sources(settings)
    app.extensions["sources"] = fan_out.open()
    atexit.register(fan_out.close)


def sources():
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return current_app.extensions["sources"]
