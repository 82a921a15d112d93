"""The deployments of each app: which server runs it (bench/sut/servers.py),
how many worker processes, as a function of the app's CPU budget (the cores
it may use), and how many threads each: the same budget for every app.
`article` and `tuned` are the two a run compares by default; TUNING holds
the configurations --tune searches (bench/modes/tune.py).
"""

from bench.sut.budget import shaped
from bench.sut.servers import PRODUCTION, SERVERS, blocking, is_server, one, per_core
from infra import apps, production

# --tune's candidates follow the interface: a WSGI app's are threads and green
# threads; an ASGI app's, event loops (infra/apps.py).
SYNC_APPS = [app.name for app in apps.known().values() if app.interface == "wsgi"]
ASYNC_APPS = [app.name for app in apps.known().values() if app.interface == "asgi"]


def double(cores):
    return 2 * cores


NOTES = {
    "article": (
        "As in the article (gunicorn.py of its repo): one worker process each, "
        "Flask under gunicorn's green-thread worker with psycopg2 left blocking, "
        "Quart under Hypercorn's uvloop worker. The gunicorn pinned here no longer ships the "
        "eventlet worker the article used: its gevent worker is the nearest equivalent. "
        "Sanic: its own server, one worker. Falcon: gunicorn, one sync worker."
    ),
    "tuned": (
        "Each app's own serve.sh: one process per core, each with 16 threads for "
        "Flask and Falcon (gunicorn's gthread: a request holds its thread while it "
        "waits on Postgres), one event loop for Quart and Sanic."
    ),
    "unbounded": (
        "tuned, with the admission limit off (QUEUE_BUDGET=0, common/admission.py): "
        "every request waits for its turn, however long, as the apps did before it."
    ),
}

# What a deployment sets over each app's own environment.
ENVIRONMENT = {"unbounded": {"QUEUE_BUDGET": "0"}}

TRIAL_SECONDS = 2  # --tune: each configuration's run per route and condition, in the search
TRIAL_STEPS = 4  # --tune: the rates of each configuration's capacity search: its peak, then 3
AS_SHIPPED = ("threads16", "loop2")  # each app's serve.sh as it ships: what the knobs are against

# --tune's configurations, named for what they vary: the concurrency knobs
# each app's practitioners turn, on the same cores and connection budget.
# deployment -> app -> (server, workers for a CPU budget or None: serve.sh's
# own, threads per process or None: the server's own)
TUNING = {
    # gunicorn's advice for sync workers: 2 x cores + 1 processes, one request each
    "sync": {app: ("gunicorn-sync", blocking, None) for app in SYNC_APPS},
    "threads4": {app: (PRODUCTION, blocking, 4) for app in SYNC_APPS},  # as many, 4 threads each
    "threads16": {app: (PRODUCTION, per_core, 16) for app in SYNC_APPS},  # serve.sh's own
    # Tried only when requests wait on sockets (--fan-out, bench/modes/tune.py):
    # a thread waiting on a source holds no connection, so more threads than
    # the budget's connections can still serve.
    "threads64": {app: (PRODUCTION, per_core, 64) for app in SYNC_APPS},
    "gevent": {app: ("gunicorn-gevent-psycogreen", per_core, None) for app in SYNC_APPS},
    "loop1": {app: (PRODUCTION, one, None) for app in ASYNC_APPS},
    "loop2": {app: (PRODUCTION, per_core, None) for app in ASYNC_APPS},  # serve.sh's own
    "loop4": {app: (PRODUCTION, double, None) for app in ASYNC_APPS},
}

DEPLOYMENTS = {
    "article": {
        "flask": ("gunicorn-gevent", one, None),
        "quart": ("hypercorn-uvloop", one, None),
        "sanic": (PRODUCTION, one, None),
        "falcon": ("gunicorn-sync", one, None),
    },
    # Each app's serve.sh with its own worker count (infra/production.py).
    "tuned": {app: (PRODUCTION, None, None) for app in apps.known()},
    # tuned less the admission limit: what it buys past capacity (--overload).
    "unbounded": {app: (PRODUCTION, None, None) for app in apps.known()},
    **TUNING,
}


def serves(deployment, app):
    """Whether deployment has a configuration for app."""
    return deployment not in DEPLOYMENTS or app in DEPLOYMENTS[deployment]


def server_for(deployment, app):
    """The server app runs under in deployment: a bench/sut/servers.py name, or
    PRODUCTION. A deployment that is a server's name runs every app under it."""
    if is_server(deployment):
        return deployment
    return DEPLOYMENTS[deployment][app][0]


def workers(deployment, app, cores, override=None):
    """Worker processes for app in deployment on this many cores."""
    if override:
        return override
    server = server_for(deployment, app)
    rule = DEPLOYMENTS[deployment][app][1] if deployment in DEPLOYMENTS else None
    if rule:
        return rule(cores)
    if server == PRODUCTION:
        return production.read(app).workers(cores)
    return SERVERS[server].workers(cores)


class NoThreads(ValueError):
    """--worker-threads for a server that runs no threads."""


def shape(deployment, app, cores, connections, workers_override=None, threads=None, **split):
    """The Shape (bench/sut/budget.py) of app in deployment, on this many
    cores under a budget of `connections` (split: bounced, copies, as
    budget.shaped takes them); threads: --worker-threads, which a server named
    with --server refuses when it has no threads (an app's own serve.sh on an
    event loop runs as it is: one thread)."""
    server = server_for(deployment, app)
    processes = workers(deployment, app, cores, workers_override)
    if threads is None and deployment in DEPLOYMENTS:
        threads = DEPLOYMENTS[deployment][app][2]
    if server == PRODUCTION:
        served = production.read(app)
        holds, default = served.holds_thread, served.threads(cores)
        threads = threads if served.threaded else None
    else:
        spec = SERVERS[server]
        threaded, holds = spec.threads is not None, spec.holds_thread
        default = spec.threads(cores) if threaded else 1
        if threads and not threaded:
            raise NoThreads(f"{server} runs no threads: --worker-threads does not apply to it")
    return shaped(processes, threads or default, holds, connections, **split)


def settings(deployment, app, shape):
    """The environment app's server gets in this deployment, for its Shape."""
    extra = {}
    if server_for(deployment, app) == PRODUCTION:
        extra = production.read(app).threads_settings(shape.threads)
    return {
        "WEB_WORKERS": str(shape.processes),
        "POOL_MIN_SIZE": "0",
        "POOL_MAX_SIZE": str(shape.pool),
        **extra,
        **ENVIRONMENT.get(deployment, {}),
    }
