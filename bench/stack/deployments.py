"""The two deployments of each app: which server runs it (bench/stack/servers.py)
and how many worker processes, as a function of the app's CPU budget (the
cores it may use): the same budget for every app.
"""

from bench.stack import production
from bench.stack.servers import PRODUCTION, SERVERS, is_server, one
from tools.serve import APPS

NOTES = {
    "article": (
        "As in the article (gunicorn.py of its repo): one worker process each, "
        "Flask under gunicorn's green-thread worker with psycopg2 left blocking, "
        "Quart under Hypercorn's uvloop worker. The gunicorn pinned here no longer ships the "
        "eventlet worker the article used: its gevent worker is the nearest equivalent. "
        "Sanic: its own server, one worker. Falcon: gunicorn, one sync worker."
    ),
    "tuned": (
        "Each app's own serve.sh: sync WSGI workers need more processes than cores "
        "(2 x cores + 1, gunicorn's advice), as each waits on Postgres; an event loop "
        "keeps one core busy, so one process per core."
    ),
}

# deployment -> app -> (server, workers for a CPU budget)
DEPLOYMENTS = {
    "article": {
        "flask": ("gunicorn-gevent", one),
        "quart": ("hypercorn-uvloop", one),
        "sanic": (PRODUCTION, one),
        "falcon": (PRODUCTION, one),
    },
    # Each app's serve.sh with its own worker count (bench/stack/production.py).
    "tuned": {app: (PRODUCTION, None) for app in APPS},
}

BEHIND_NGINX = "+nginx"  # a deployment's variant with nginx in front (--proxy)
REPLICAS = " x"  # its variant with N copies of each app behind nginx (--replicas)


def replicated(deployment, copies):
    """The deployment with `copies` copies of each app behind one nginx,
    "tuned x2"; one copy: the deployment itself. Copies are always behind
    nginx (it balances over them), so "tuned+nginx" gives "tuned x2" too."""
    return f"{base(deployment)}{REPLICAS}{copies}" if copies > 1 else deployment


def replicas(deployment):
    """How many copies of each app the deployment runs: 2 for "tuned x2"."""
    _, marker, count = deployment.rpartition(REPLICAS)
    return int(count) if marker and count.isdigit() else 1


def behind_nginx(deployment):
    return deployment.endswith(BEHIND_NGINX) or replicas(deployment) > 1


def base(deployment):
    """The deployment without its proxy or replicas variant."""
    if replicas(deployment) > 1:
        deployment = deployment.rpartition(REPLICAS)[0]
    return deployment.removesuffix(BEHIND_NGINX)


def server_for(deployment, app):
    """The server app runs under in deployment: a bench/stack/servers.py name, or
    PRODUCTION. A deployment that is a server's name runs every app under it."""
    deployment = base(deployment)
    if is_server(deployment):
        return deployment
    return DEPLOYMENTS[deployment][app][0]


def workers(deployment, app, cores, override=None):
    """Worker processes for app in deployment on this many cores."""
    if override:
        return override
    deployment = base(deployment)
    server = server_for(deployment, app)
    rule = DEPLOYMENTS[deployment][app][1] if deployment in DEPLOYMENTS else None
    if rule:
        return rule(cores)
    if server == PRODUCTION:
        return production.read(app).workers(cores)
    return SERVERS[server].workers(cores)


def settings(deployment, app, cores, workers_override=None, pool_size=20):
    """The environment app's server gets in this deployment."""
    return {
        "WEB_WORKERS": str(workers(deployment, app, cores, workers_override)),
        "POOL_MIN_SIZE": "0",
        "POOL_MAX_SIZE": str(pool_size),
    }
