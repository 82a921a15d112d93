"""The rating sources' HTTP client: one per worker process, opened and closed
as the pool is (db.py)."""

from quart import current_app

from common.async_sources import Sources


def init_app(app, settings):
    fan_out = Sources(settings)
    app.extensions["sources"] = fan_out
    app.before_serving(fan_out.open)
    app.after_serving(fan_out.close)


def sources():
    """This worker's Sources: the client, the base URLs, the fan-out's timeout."""
    return current_app.extensions["sources"]
