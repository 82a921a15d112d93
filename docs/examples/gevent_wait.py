"""Does one waiting query stall a gunicorn worker? docs/migration.md's gevent trap.

flask_app under gunicorn with one worker process, per server of
bench/sut/servers.py: the review table is locked, a POST /reviews/ waits on the
lock (until DATABASE_TIMEOUT: 503), and meanwhile a GET /films/995/ is timed.
Under a sync worker the GET waits for the POST. Under gevent it waits too if
psycopg2 blocks the process, as it does with the PoolWrapper's wait callback
(which waits in the operating system's select, not gevent's); it does not with
psycogreen's, which gevent can switch in. Measured, every server and the
database stopped at the end:

    .venv/bin/python -m docs.examples.gevent_wait > docs/results/2026-11-23-gevent-wait.json
"""

import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request

import psycopg2

from bench.sut.budget import Shape
from bench.sut.servers import SERVERS
from db import embedded
from docs.examples.report import print_report
from tools.serve import database, running

SERVER_NAMES = ("gunicorn-sync", "gunicorn-gevent", "gunicorn-gevent-psycogreen")
DATABASE_TIMEOUT = 3  # seconds the POST waits on the lock before its 503
REVIEW = b'{"film_id": 995, "rating": 4}'


def timed(url, data=None):
    """(status, seconds) of one request."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=20) as r:
            status = r.status
    except urllib.error.HTTPError as error:
        status = error.code
    return status, time.monotonic() - start


def get_behind_locked_post(url, database_url):
    """(GET status, GET seconds, POST status) while the POST waits on a lock."""
    locker = psycopg2.connect(database_url)
    try:
        locker.cursor().execute("LOCK TABLE review")
        post = {}
        thread = threading.Thread(target=lambda: post.update(r=timed(f"{url}/reviews/", REVIEW)))
        thread.start()
        time.sleep(0.5)  # the POST is waiting on the lock by now
        status, seconds = timed(f"{url}/films/995/")
        thread.join()
    finally:
        locker.rollback()
        locker.close()
    return status, seconds, post["r"][0]


def measure(name, database_url, repeat):
    port = embedded.free_port()
    argv = SERVERS[name].command("flask", "127.0.0.1", port, Shape(1, 1, 20, holds_thread=True))
    settings = {"web_workers": 1, "database_timeout": DATABASE_TIMEOUT}
    with (
        tempfile.NamedTemporaryFile(suffix=".log") as log,  # not stdout: that is the report
        running("flask", port, database_url, log.name, command=argv, **settings) as server,
    ):
        runs = [get_behind_locked_post(server.url, database_url) for _ in range(repeat)]
    return {
        "get_status": sorted({run[0] for run in runs}),
        "post_status": sorted({run[2] for run in runs}),
        "get_behind_locked_post_s": round(statistics.median(run[1] for run in runs), 3),
    }


def main(repeat=3):
    with database() as database_url:
        results = {name: measure(name, database_url, repeat) for name in SERVER_NAMES}
    print_report(
        "python -m docs.examples.gevent_wait",
        app="flask, 1 worker process",
        database_timeout_s=DATABASE_TIMEOUT,
        repeat=repeat,
        servers=results,
    )


if __name__ == "__main__":
    main()
