"""The rating sources' HTTP client: one per worker process, opened and closed
as the pool is (db.py)."""

import atexit

from common.sources import Sources


def open_sources(settings):
    """The Sources, their client open, and closed when the worker process exits.

    The Ratings resource keeps them: its calls share the client's connections.
    """
    fan_out = Sources(settings)
    atexit.register(fan_out.close)
    return fan_out.open()
