"""Small helpers the test modules share."""

import os

import pytest

from bench.options import grouped
from bench.routes import ROUTES
from bench.stack import pgbouncer
from db import embedded
from tests.faults import behind_proxy
from tools.serve import AppNotStarted, running


def query(connection, sql, *params):
    """All rows of one statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def needs_pgbouncer():
    """Skip the test where PgBouncer is not installed; fail it in CI (.ci/run
    installs it)."""
    if not pgbouncer.binary():
        message = "no pgbouncer: apt-get install pgbouncer (.ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def serve(app, database_url, log_dir, **settings):
    """Start app; yield its Server once /health answers; stop it afterwards."""
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
        routes=list(ROUTES),
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
    return grouped(**{**values, **changes})


def check_tuned_environment(environment, app, cores):
    """A deployment's environment for app (compose, Kubernetes) runs what
    ./benchmark.sh's tuned deployment runs on these cores: the same worker
    processes; behind PgBouncer (the budget is its pool), each process keeps
    at least the pool it can use (one connection a sync worker, a share an
    event loop). Values as strings, as the manifests hold them."""
    from bench.stack import deployments

    shape = deployments.shape("tuned", app, cores, 20, bounced=True)
    expected = deployments.settings("tuned", app, shape)
    assert environment["WEB_WORKERS"] == expected["WEB_WORKERS"], app
    assert environment["POOL_MIN_SIZE"] == expected["POOL_MIN_SIZE"], app
    assert int(environment["POOL_MAX_SIZE"]) >= shape.pool, app
