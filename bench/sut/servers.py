"""The servers an app can run under: one table of command lines per interface
(WSGI, ASGI), for --server and for the article's deployment.

Each app's serve.sh stays its one production command (tests, compose,
benchmark.sh's tuned deployment); the variants a reader might pick instead live
here, so that `diff -ru flask_app quart_app` shows the migration and not
benchmark plumbing. Worker processes and threads are derived from the app's
CPU budget (its cores) by the same rules for every app, and stated in the report:
- a process that blocks on Postgres per request (gunicorn sync, Tornado's
  WSGIContainer): 2 x cores + 1 processes, gunicorn's advice;
- an event loop, or a process with threads: one process per core;
- a server with no process manager (waitress, Twisted, wsgiref) runs one
  process: that is what it offers, and the report shows what it costs.
"""

from dataclasses import dataclass

from infra import apps

PRODUCTION = "serve.sh"  # the app's own serve.sh: its production server


def one(cores):
    return 1


def per_core(cores):
    return cores


def blocking(cores):
    return 2 * cores + 1


@dataclass(frozen=True)
class ServerSpec:
    """How to run an app under one server: its command line, as a person
    types it, with {target} {host} {port} {workers} {threads} filled in."""

    name: str
    interface: str  # wsgi or asgi
    line: str  # the argv, words split at spaces
    workers: object  # cores -> worker processes
    threads: object = None  # cores -> threads per process, where the server has them
    packages: tuple = ()  # distributions whose versions the report states
    note: str = ""
    floor: bool = False  # a reference, not a production server: never sets a matrix's rate
    # Whether a request holds its thread (or process) while it waits on
    # Postgres: then a process has at most `threads` requests in flight;
    # else (an event loop, green threads with a cooperative driver) its pool bounds it.
    holds_thread: bool = True

    def command(self, app, host, port, shape):
        """The argv that serves app in its Shape (bench/sut/budget.py)."""
        values = {
            "target": apps.get(app).factory,  # called once per worker process
            "host": host,
            "port": port,
            "workers": shape.processes,
            "threads": shape.threads if self.threads else "",
        }
        return [word.format(**values) for word in self.line.split()]


def four(cores):
    return 4


GUNICORN = "gunicorn {target}() --bind {host}:{port} --workers {workers}"
GUNICORN_END = "--graceful-timeout 5 --no-control-socket"
RUNNER = "python -m bench.sut.wsgi_servers"  # servers with no command of their own
HYPERCORN = "hypercorn {target}() --bind {host}:{port} --workers {workers}"

SERVERS = {
    server.name: server
    for server in [
        ServerSpec(
            "gunicorn-sync",
            "wsgi",
            f"{GUNICORN} --worker-class sync {GUNICORN_END}",
            blocking,
            packages=("gunicorn",),
            note="one request at a time per process (gunicorn's default worker)",
        ),
        ServerSpec(
            "gunicorn-gthread",
            "wsgi",
            f"{GUNICORN} --worker-class gthread --threads {{threads}} {GUNICORN_END}",
            per_core,
            threads=four,
            packages=("gunicorn",),
            note="threads share one GIL per process",
        ),
        ServerSpec(
            "gunicorn-gevent",
            "wsgi",
            f"{GUNICORN} --worker-class gevent {GUNICORN_END}",
            per_core,
            packages=("gunicorn", "gevent"),
            note="green threads; psycopg2 still blocks the whole process (the article's kind)",
        ),
        ServerSpec(
            "gunicorn-gevent-psycogreen",
            "wsgi",
            f"{GUNICORN} --worker-class gevent --config python:bench.sut.psycogreen_hook "
            f"{GUNICORN_END}",
            per_core,
            packages=("gunicorn", "gevent", "psycogreen"),
            note="green threads, and psycopg2 made cooperative by psycogreen's wait callback",
            holds_thread=False,
        ),
        ServerSpec(
            "waitress",
            "wsgi",
            "waitress-serve --listen={host}:{port} --threads={threads} --call {target}",
            one,
            threads=blocking,
            packages=("waitress",),
            note="pure Python, one process with a thread pool",
        ),
        ServerSpec(
            "tornado",
            "wsgi",
            f"{RUNNER} tornado {{target}} {{host}} {{port}} {{workers}} {{threads}}",
            blocking,
            packages=("tornado",),
            note="Tornado's WSGIContainer: each process runs one request at a time on its loop",
        ),
        ServerSpec(
            "twisted",
            "wsgi",
            f"{RUNNER} twisted {{target}} {{host}} {{port}} {{workers}} {{threads}}",
            one,
            threads=blocking,
            packages=("twisted",),
            note="Twisted's WSGIResource: one reactor process, requests on its thread pool",
        ),
        ServerSpec(
            "wsgiref",
            "wsgi",
            f"{RUNNER} wsgiref {{target}} {{host}} {{port}} {{workers}} {{threads}}",
            one,
            packages=(),
            note="the standard library's reference server: one thread, the floor",
            floor=True,
        ),
        ServerSpec(
            "granian-wsgi",
            "wsgi",
            "granian --interface wsgi --factory {target} --host {host} --port {port} "
            "--workers {workers} --blocking-threads {threads} --no-ws",
            per_core,
            threads=four,
            packages=("granian",),
            note="Rust HTTP, the app on a pool of blocking threads per process",
        ),
        ServerSpec(
            "uvicorn",
            "asgi",
            "uvicorn {target} --factory --host {host} --port {port} --workers {workers} "
            "--loop uvloop --http httptools --lifespan on --ws none --timeout-graceful-shutdown 5 "
            "--no-access-log",
            per_core,
            packages=("uvicorn", "uvloop", "httptools"),
            note="uvloop and httptools (C); Quart's serve.sh adds its admission to the protocol",
            holds_thread=False,
        ),
        ServerSpec(
            "hypercorn-uvloop",
            "asgi",
            f"{HYPERCORN} --worker-class uvloop --graceful-timeout 5 --backlog 2048",
            per_core,
            packages=("hypercorn", "uvloop"),
            note="Quart's own server (h11, pure Python) on uvloop: the article's",
            holds_thread=False,
        ),
        ServerSpec(
            "hypercorn-asyncio",
            "asgi",
            f"{HYPERCORN} --worker-class asyncio --graceful-timeout 5 --backlog 2048",
            per_core,
            packages=("hypercorn",),
            note="Hypercorn on the standard asyncio loop",
            holds_thread=False,
        ),
        ServerSpec(
            "granian-asgi",
            "asgi",
            "granian --interface asgi --factory {target} --host {host} --port {port} "
            "--workers {workers} --loop uvloop --no-ws",
            per_core,
            packages=("granian", "uvloop"),
            note="Rust HTTP, the app on uvloop",
            holds_thread=False,
        ),
        ServerSpec(
            "gunicorn-uvicorn",
            "asgi",
            f"{GUNICORN} --worker-class uvicorn_worker.UvicornWorker {GUNICORN_END}",
            per_core,
            packages=("gunicorn", "uvicorn-worker", "uvicorn", "uvloop", "httptools"),
            note="uvicorn's workers under gunicorn's process manager",
            holds_thread=False,
        ),
    ]
}


def is_server(deployment):
    """Whether a deployment is one server's name (--server), not article/tuned."""
    return deployment == PRODUCTION or deployment in SERVERS


def names_for(app):
    """The servers app can run under (its own serve.sh first)."""
    interface = apps.get(app).interface
    return [PRODUCTION] + [s.name for s in SERVERS.values() if s.interface == interface]
