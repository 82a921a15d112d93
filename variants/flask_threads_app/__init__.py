"""Flask with a thread pool for its calls out: flask_app/ as it is, but for
how GET /films/<film_id>/ratings/ asks its rating sources (ratings.py): all at
once, each call in a thread of a pool the worker keeps, where flask_app asks
them one after another. What a Flask team tries before it migrates
(docs/migration/fan-out.md, "When a request waits on other services").

A variant in a folder of its own, rather than a switch in flask_app/: flask_app
stays the plain baseline every comparison starts from, and `diff -ru flask_app
quart_app` stays the migration alone.

gunicorn builds one app per worker process: 'flask_threads_app:create_app()'
(see serve.sh).
"""

import atexit
from concurrent.futures import ThreadPoolExecutor

import flask_app
from common.ratings import MAX_CONNECTIONS

from . import ratings


def create_app(settings=None):
    """flask_app's app, its ratings view asking the sources from this worker's
    thread pool."""
    app = flask_app.create_app(settings)
    # As many threads as the client has connections: a call beyond them would
    # wait for a connection anyway. Threads start as calls need them, not here.
    threads = ThreadPoolExecutor(MAX_CONNECTIONS, thread_name_prefix="fan-out")
    atexit.register(threads.shutdown, cancel_futures=True)
    app.extensions["fan-out threads"] = threads
    app.view_functions["ratings.get_ratings"] = ratings.get_ratings
    return app
