"""Flask's own async views (flask[async]) add no concurrency, as something that runs.

A tiny Flask app (not the product's: it needs no database) under gunicorn with
one sync worker, so that one thread is all there is and what holds it shows
alone; flask_app/serve.sh runs 16 threads a process, each held the same way
(measured on them: docs/results.md, "Flask's own async views, on the threads
Flask ships"). Its views are `async def` and await asyncio.sleep(SLEEP),
standing in for an awaited database call. Flask
runs each one to its end in an event loop of its own (asgiref's async_to_sync)
while the worker waits for it, so:
- a request that does nothing, sent while one waits, waits too;
- CLIENTS concurrent requests take CLIENTS x SLEEP, one after another;
- only inside one request do awaits overlap: /gather awaits two sleeps at once.
Measured, with the server stopped at the end:

    .venv/bin/python -m docs.examples.flask_async_views \
        > docs/results/2026-11-23-flask-async-views.json

tests/reliability/test_flask_async_views.py runs the same measurement, with wide margins.
"""

import asyncio
import statistics
import sys
from contextlib import contextmanager

from flask import Flask

from docs.examples.blocking_trap import concurrent, get, quick_behind, served
from docs.examples.report import print_report

SLEEP = 0.5  # seconds each awaited wait takes
CLIENTS = 4  # concurrent requests to /awaiting

app = Flask(__name__)


@app.get("/awaiting")
async def awaiting():
    """An awaited wait: the event loop is free, but it is this request's alone."""
    await asyncio.sleep(SLEEP)
    return {"waited": SLEEP}


@app.get("/gather")
async def gather():
    """Two awaited waits at once: the concurrency flask[async] does give."""
    await asyncio.gather(asyncio.sleep(SLEEP), asyncio.sleep(SLEEP))
    return {"waited": SLEEP}


@app.get("/health")
def health():
    """Does nothing: the request whose latency is measured."""
    return {"status": "ok"}


@contextmanager
def serving():
    """Yield the port of this app under gunicorn, one sync worker; stop it on exit."""
    gunicorn = [sys.executable, "-m", "gunicorn", f"{__spec__.name}:app", "--workers", "1"]
    with served(
        lambda port: [*gunicorn, "--worker-class", "sync", "--bind", f"127.0.0.1:{port}"]
    ) as port:
        yield port


def measure(port, repeat=3):
    """Median seconds: /health behind one waiting /awaiting, CLIENTS concurrent
    requests to /awaiting, and one /gather."""

    def median(measurement):
        return round(statistics.median(measurement() for _ in range(repeat)), 3)

    return {
        "health_behind_one_s": median(lambda: quick_behind(port, "awaiting")),
        f"{CLIENTS}_concurrent_s": median(lambda: concurrent(port, "awaiting", CLIENTS)),
        "gather_two_s": median(lambda: get(port, "/gather")),
    }


def main():
    with serving() as port:
        results = measure(port, repeat=5)
    print_report(
        "python -m docs.examples.flask_async_views",
        server="gunicorn, 1 sync worker",
        sleep_s=SLEEP,
        repeat=5,
        **results,
    )


if __name__ == "__main__":
    main()
