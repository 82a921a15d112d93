"""gunicorn config for the gevent + psycogreen server variant: psycopg2 waits
through gevent (a wait callback) instead of blocking the worker process.

    gunicorn --worker-class gevent --config python:bench.sut.psycogreen_hook ...
"""


def post_fork(server, worker):
    from psycogreen.gevent import patch_psycopg

    patch_psycopg()
