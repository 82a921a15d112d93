"""The two deployments of each app, as the environment its serve.sh reads.

serve.sh stays the one command that serves an app (tests, benchmark, compose);
a deployment only sets its knobs. WEB_WORKERS is a function of the app's CPU
budget (the cores it may use): the same budget for every app.
"""

NOTES = {
    "article": (
        "As in the article (gunicorn.py of its repo): one worker process each, "
        "Flask under gunicorn's green-thread worker with psycopg2 left blocking, "
        "Quart under Hypercorn's uvloop worker. The gunicorn pinned here no longer ships the "
        "eventlet worker the article used: its gevent worker is the nearest equivalent. "
        "Sanic: its own server, one worker. Falcon: gunicorn, one sync worker."
    ),
    "tuned": (
        "The best configuration found on this CPU budget: sync WSGI workers need "
        "more processes than cores (2 x cores + 1, gunicorn's advice), as each "
        "waits on Postgres; an event loop keeps one core busy, so one process per core."
    ),
}


def _one(cores):
    return 1


def _per_core(cores):
    return cores


def _sync(cores):
    return 2 * cores + 1


# deployment -> app -> (workers for a CPU budget, other serve.sh settings)
DEPLOYMENTS = {
    "article": {
        "flask": (_one, {"WORKER_CLASS": "gevent"}),
        "quart": (_one, {"WORKER_CLASS": "uvloop"}),
        "sanic": (_one, {}),
        "falcon": (_one, {}),  # gunicorn sync, serve.sh's own
    },
    "tuned": {
        "flask": (_sync, {"WORKER_CLASS": "sync"}),
        "quart": (_per_core, {"WORKER_CLASS": "uvicorn"}),
        "sanic": (_per_core, {}),
        "falcon": (_sync, {}),
    },
}

# app -> the distributions its serve.sh may run on; which server ran is in the
# recorded command line.
STACKS = {
    "flask": ["flask", "gunicorn", "gevent", "psycopg2-binary"],
    "quart": ["quart", "uvicorn", "hypercorn", "uvloop", "httptools", "asyncpg"],
    "sanic": ["sanic", "uvloop", "httptools", "asyncpg"],
    "falcon": ["falcon", "gunicorn", "psycopg2-binary"],
}


def settings(deployment, app, cores, workers=None, pool_size=20):
    """The environment for app's serve.sh in this deployment. workers, when
    given, overrides the deployment's count (the same for every app)."""
    count, extra = DEPLOYMENTS[deployment].get(app, (_per_core, {}))
    return {
        **extra,
        "WEB_WORKERS": str(workers or count(cores)),
        "POOL_MIN_SIZE": "0",
        "POOL_MAX_SIZE": str(pool_size),
    }
