"""The blocking-call trap of docs/migration.md, as something that runs.

A tiny Quart app (not the product's: it needs no database) under uvicorn with
one worker. Three views wait SLEEP seconds, standing in for a slow database
call: one blocks (time.sleep, as psycopg2 would), one awaits (asyncio.sleep, as
asyncpg does), one hands the blocking call to a thread (quart.utils.run_sync).
While one of them waits, how long does a request to a view that does nothing
take? Measured, with every server stopped at the end:

    .venv/bin/python -m docs.examples.blocking_trap > docs/results/2026-11-23-blocking-call.json

tests/reliability/test_blocking_trap.py runs the same measurement and asserts the stall.
"""

import asyncio
import http.client
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from quart import Quart
from quart.utils import run_sync

from docs.examples.report import print_report

SLEEP = 0.5  # seconds each slow view waits
VIEWS = ("blocking", "awaiting", "in-thread")
CLIENTS = 4  # concurrent requests to one slow view

app = Quart(__name__)


@app.get("/blocking")
async def blocking():
    """The trap: a blocking call in an async view stops this worker's event
    loop, so that no other request on the worker runs until it returns."""
    time.sleep(SLEEP)
    return {"waited": SLEEP}


@app.get("/awaiting")
async def awaiting():
    """The migration: the wait is awaited, and the loop serves others meanwhile."""
    await asyncio.sleep(SLEEP)
    return {"waited": SLEEP}


@app.get("/in-thread")
async def in_thread():
    """Where only a blocking library exists: run it in a thread, and await that."""
    await run_sync(time.sleep)(SLEEP)
    return {"waited": SLEEP}


@app.get("/health")
async def health():
    """Does nothing: the request whose latency is measured."""
    return {"status": "ok"}


def get(port, path):
    """Seconds one GET takes, connection included; AssertionError unless 200."""
    start = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.status == 200, f"GET {path}: {response.status}"
    return time.monotonic() - start


def quick_behind(port, view):
    """Seconds GET /health takes while one request to view is waiting."""
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(get, port, f"/{view}")
        time.sleep(SLEEP / 5)  # the slow request is in its view by now
        seconds = get(port, "/health")
        slow.result()
    return seconds


def concurrent(port, view, clients=CLIENTS):
    """Seconds until all of `clients` concurrent requests to view are answered."""
    start = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda _: get(port, f"/{view}"), range(clients)))
    return time.monotonic() - start


@contextmanager
def served(command):
    """Yield the free port that command(port), a server's argv, listens on
    once /health answers; stop the server on exit."""
    from db.embedded import free_port
    from tools import ROOT
    from tools.serve import stop, wait_healthy

    port = free_port()
    process = subprocess.Popen(
        command(port),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_healthy(process, f"http://127.0.0.1:{port}", timeout=30)
        yield port
    finally:
        stop(process)


@contextmanager
def serving():
    """Yield the port of this app under uvicorn, one worker; stop it on exit."""
    uvicorn = [sys.executable, "-m", "uvicorn", f"{__spec__.name}:app", "--host", "127.0.0.1"]
    with served(
        lambda port: [*uvicorn, "--port", str(port), "--workers", "1", "--no-access-log"]
    ) as port:
        yield port


def measure(port, repeat=3):
    """Median seconds per view: /health behind one waiting request, and
    CLIENTS concurrent requests to the view."""
    return {
        "health_behind_one_s": {
            view: round(statistics.median(quick_behind(port, view) for _ in range(repeat)), 3)
            for view in VIEWS
        },
        f"{CLIENTS}_concurrent_s": {
            view: round(statistics.median(concurrent(port, view) for _ in range(repeat)), 3)
            for view in VIEWS
        },
    }


def main():
    with serving() as port:
        results = measure(port, repeat=5)
    print_report(
        "python -m docs.examples.blocking_trap",
        server="uvicorn, 1 worker",
        sleep_s=SLEEP,
        repeat=5,
        **results,
    )


if __name__ == "__main__":
    main()
