"""Small helpers the test modules share."""

import json
import os
import subprocess
import time

import psycopg2
import pytest

from bench.modes import options_type
from bench.options import grouped
from bench.routes import DEFAULT_ROUTES
from db import embedded, roles
from tests.faults import behind_proxy
from tests.system_tools import system_tool
from tools import ROOT
from tools.serve import AppNotStarted, running


def wait_until(condition, timeout):
    """Poll condition() every 20 ms until it holds (True) or timeout seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def port_of(server):
    """The port of a server the tests started (its url: http://host:port)."""
    return int(server.url.rsplit(":", 1)[1])


def query(connection, sql, *params):
    """All rows of one statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# Rows "of yours" in a database the bench is pointed at: reviews of several
# films, some with Idempotency-Keys, ids with gaps, sequences moved ahead.
ROWS_OF_YOURS = """
INSERT INTO review (film_id, rating, idempotency_key, created_at)
SELECT 1 + (n * 37) % 1000, 1 + n % 5, CASE WHEN n % 3 = 0 THEN 'yours-' || n END,
       '2020-01-01'::timestamptz + n * interval '1 hour'
  FROM generate_series(1, 400) AS n;
INSERT INTO review (film_id, rating) SELECT 995, 4 FROM generate_series(1, 50);
DELETE FROM review WHERE review_id % 7 = 0;
SELECT setval('review_review_id_seq', greatest(90000, last_value)) FROM review_review_id_seq;
SELECT setval('film_film_id_seq', greatest(5000, last_value)) FROM film_film_id_seq;
"""
CHECKSUMS = {
    "review": "SELECT count(*), md5(string_agg(r::text, '|' ORDER BY review_id)) FROM review r",
    "film": "SELECT count(*), md5(string_agg(f::text, '|' ORDER BY film_id)) FROM film f",
}
SEQUENCES = "SELECT r.last_value, f.last_value FROM review_review_id_seq r, film_film_id_seq f"


def add_rows_of_yours(database_url):
    connection = psycopg2.connect(database_url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute(ROWS_OF_YOURS)
    finally:
        connection.close()


def snapshot(database_url):
    """(a checksum of every row of review and film, the sequences' values)."""
    connection = psycopg2.connect(database_url)
    try:
        rows = {table: query(connection, sql) for table, sql in CHECKSUMS.items()}
        return rows, query(connection, SEQUENCES)[0]
    finally:
        connection.close()


def assert_unchanged(before, after):
    """Every row as it was, and no sequence moved back (an id it handed out
    would be handed out again)."""
    assert after[0] == before[0], "rows that were there before differ"
    assert all(now >= then for now, then in zip(after[1], before[1], strict=True)), (after, before)


def clean_bench_report(results):
    """The JSON of the one run saved under results (a folder per run), once
    every route it measured answered every request 2xx and every POST run's
    ledger balanced (every 201 a row, no row without its request)."""
    [report] = results.glob("*/*.json")
    data = json.loads(report.read_text())
    for measurement in data["measurements"]:
        summary = measurement["summary"]
        assert summary["requests"] > 0, measurement
        assert summary["socket_errors"] == summary["non_2xx"] == 0, measurement
    [review] = [m for m in data["measurements"] if m["route"] == "review"]
    assert review["ledgers"] and all(ledger["ok"] for ledger in review["ledgers"]), review
    return data


def socket_url(url, data_dir):
    """An embedded server's url over its Unix socket in data_dir: reachable
    from any network namespace of this machine, whatever its addresses."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    database = url.rsplit("/", 1)[1]
    return f"postgresql://postgres@/{database}?host={data_dir}&port={port}"


def needs_pgbouncer():
    """PgBouncer, or the test skips or fails (tests/system_tools.py)."""
    system_tool("pgbouncer")


def serve(app, database_url, log_dir, **settings):
    """Start app; yield its Server once /health answers; stop it afterwards.
    On the embedded Postgres (and the tests' own) it logs in as films_app."""
    database_url = roles.app_url(database_url)
    port = embedded.free_port()
    try:
        with running(app, port, database_url, log_dir / f"{app}-{port}.log", **settings) as server:
            if os.environ.get("TEST_PROXY"):  # the same suites, through nginx
                yield from behind_proxy(server, log_dir)
            else:
                yield server
    except AppNotStarted as error:
        pytest.fail(str(error))


def bench_options(**changes):
    """The Options of a benchmark run (bench/options.py), as ./benchmark.sh flask
    quart would make them, with changes."""
    values = dict(
        apps=["flask", "quart"],
        deployments=["article", "tuned"],
        routes=list(DEFAULT_ROUTES),
        connections=[20],
        threads=2,
        duration=8,
        warmup=2,
        timeout=10,
        repeat=5,
        workers=None,
        worker_threads=None,
        db_connections=None,
        env={},
        database_url=None,
        target=None,
        port=0,
        pin={"app": "0-1", "db": "0", "load": "1"},
        pgbench=True,
        results_dir="results",
        command="./benchmark.sh flask quart",
    )
    return grouped(options_type(), **{**values, **changes})


def check_tuned_environment(environment, app, cores):
    """A deployment's environment for app (compose, Kubernetes) runs what
    ./benchmark.sh's tuned deployment runs on these cores: the same worker
    processes; behind PgBouncer (the budget is its pool), each process keeps
    at least the pool it can use (one connection a thread, a share an
    event loop). Values as strings, as the manifests hold them."""
    from bench.sut import deployments

    shape = deployments.shape("tuned", app, cores, 20, bounced=True)
    expected = deployments.settings("tuned", app, shape)
    assert environment["WEB_WORKERS"] == expected["WEB_WORKERS"], app
    assert environment.get("WEB_THREADS") == expected.get("WEB_THREADS"), app
    assert environment["POOL_MIN_SIZE"] == expected["POOL_MIN_SIZE"], app
    assert int(environment["POOL_MAX_SIZE"]) >= shape.pool, app


def in_flight(environment):
    """The most requests a deployed copy of an app works on at once, from its
    environment (compose, Kubernetes): its workers x its threads or its
    pool, whichever is fewer (bench/sut/budget.py Shape, the rule
    ./benchmark.sh --proxy limit gives each copy)."""
    from bench.sut.budget import Shape

    threads = environment.get("WEB_THREADS")  # a gthread worker's: a request holds one
    return Shape(
        processes=int(environment["WEB_WORKERS"]),
        threads=int(threads or 1),
        pool=int(environment["POOL_MAX_SIZE"]),
        holds_thread=threads is not None,
    ).in_flight()


def run_benchmark(*args, env=None, timeout=300, **popen):
    """./benchmark.sh args, as a user runs it from the checkout; its
    CompletedProcess (stdout and stderr captured, not checked)."""
    return subprocess.run(
        ["./benchmark.sh", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        **popen,
    )


def benchmark(results_dir, *args, timeout=180):
    """./benchmark.sh args, saving into results_dir, which must succeed: (the
    path of the results JSON it saved in the run's folder, its content)."""
    completed = run_benchmark(*args, "--results", str(results_dir), timeout=timeout)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [path] = results_dir.glob("*/*.json")  # results_dir/<time>-<apps>/<time>-<apps>.json
    assert path.stem == path.parent.name
    return path, json.loads(path.read_text())


# The sessions of this connection's database that wait on a lock: another
# database's on the same server (a test running beside) are not counted.
LOCK_WAITERS = (
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE wait_event_type = 'Lock' AND datname = current_database()"
)
