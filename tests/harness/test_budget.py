"""Concurrency as first-class options, under one connection budget: the
Shape each app runs in (bench/sut/budget.py), the threads and processes
read back from the running server (bench/sut/readback.py), and the budget
held at Postgres, end to end."""

import shutil
import tempfile
from pathlib import Path

import psycopg2
import pytest

from bench import cli
from bench.run import fitted
from bench.sut import budget, deployments, readback, targets
from bench.sut.budget import DEFAULT_CONNECTIONS, Shape, shaped
from bench.sut.database import SPARE_CONNECTIONS
from bench.sut.lineup import Deployment, Slot, connections_needed, lineup
from bench.sut.servers import PRODUCTION, SERVERS
from db import embedded
from db.load import load
from tests.helpers import bench_options, benchmark
from tools.serve import APPS, running


def test_a_sync_worker_gets_one_connection_an_event_loop_its_share():
    assert shaped(5, 1, True, 20) == Shape(5, 1, 1, True)  # 5 of the 20 used
    assert shaped(2, 1, False, 20) == Shape(2, 1, 10, False)
    assert shaped(5, 20, True, 20) == Shape(5, 20, 4, True)  # threads wait on the pool
    assert shaped(2, 4, True, 20) == Shape(2, 4, 4, True)


def test_no_more_processes_than_connections_unless_pgbouncer_shares_them():
    assert shaped(9, 1, True, 4) == Shape(4, 1, 1, True)
    assert shaped(9, 1, True, 4, bounced=True) == Shape(9, 1, 1, True)
    assert shaped(2, 1, False, 4, bounced=True) == Shape(2, 1, 2, False)
    with pytest.raises(ValueError):
        shaped(1, 1, True, 0)


def test_in_flight_is_the_least_of_pools_threads_and_clients():
    assert Shape(5, 20, 4, True).in_flight() == 20
    assert Shape(5, 20, 4, True).in_flight(clients=10) == 10
    assert Shape(5, 1, 1, True).in_flight(clients=100) == 5
    assert Shape(2, 1, 10, False).in_flight(clients=100) == 20


def test_the_budget_is_lowered_to_fit_only_when_not_asked():
    assert budget.fitting(87, 8) == 10
    assert budget.fitting(1000, 4) == budget.DEFAULT_CONNECTIONS
    assert budget.fitting(87, 4, asked=30) is None
    assert budget.fitting(87, 4, asked=20) == 20
    assert budget.fitting(3, 8) is None


@pytest.mark.parametrize("server", ["gunicorn-gthread", "waitress", "twisted", "granian-wsgi"])
def test_worker_threads_reach_every_server_that_has_threads(server):
    shape = deployments.shape(server, "flask", 2, 20, threads=7)
    assert shape.threads == 7
    assert (
        "7"
        in " ".join(SERVERS[server].command("flask", "127.0.0.1", 1, shape))
        .replace("=", " ")
        .split()
    )


@pytest.mark.parametrize("server", ["gunicorn-sync", "gunicorn-gevent", "wsgiref", "uvicorn"])
def test_a_server_without_threads_refuses_them_in_one_sentence(server, capsys):
    app = "quart" if SERVERS[server].interface == "asgi" else "flask"
    with pytest.raises(deployments.NoThreads, match="runs no threads"):
        deployments.shape(server, app, 2, 20, threads=4)
    with pytest.raises(SystemExit) as refused:
        cli.checked([app, "--server", server, "--worker-threads", "4"])
    assert refused.value.code == 2 and "--worker-threads" in capsys.readouterr().err


def test_serve_sh_threads_go_through_gunicorn_and_an_event_loop_runs_as_it_is():
    flask = deployments.shape("tuned", "flask", 2, 40, threads=8)
    assert (flask.processes, flask.threads, flask.pool) == (2, 8, 8)
    settings = deployments.settings("tuned", "flask", flask)
    assert settings["WEB_THREADS"] == "8" and settings["POOL_MAX_SIZE"] == "8"
    shipped = deployments.shape("tuned", "flask", 2, 40)  # serve.sh's own: 16 threads
    assert (shipped.processes, shipped.threads, shipped.pool) == (2, 16, 16)
    quart = deployments.shape("tuned", "quart", 2, 40, threads=8)
    assert (quart.processes, quart.threads, quart.pool) == (2, 1, 20)
    assert "WEB_THREADS" not in deployments.settings("tuned", "quart", quart)


def options(**changes):
    return bench_options(**{"apps": list(APPS), "routes": ["film"], "pin": None, **changes})


@pytest.fixture(scope="module")
def stock_postgres():
    """A Postgres of this module's own with Postgres's stock max_connections
    (100), holding the sample data: what a user's DATABASE_URL often is."""
    data_dir = Path(tempfile.mkdtemp(prefix="pgstock-"))
    try:
        url = embedded.start(database="dvdrental_stock", data_dir=data_dir, max_connections=100)
        load(url)
        yield url
    finally:
        embedded.stop(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.mark.slow  # starts a Postgres of its own (stock_postgres)
def test_every_server_of_every_app_fits_a_stock_postgres(stock_postgres):
    connection = psycopg2.connect(stock_postgres)
    try:
        free = connection.cursor()
        free.execute("SELECT current_setting('max_connections')::int")
        assert free.fetchone()[0] == 100
        every = options(deployments=[*SERVERS, "serve.sh"]).sut
        slots = fitted(every, lineup(every, DEFAULT_CONNECTIONS), connection)
        needed = connections_needed(slots) + SPARE_CONNECTIONS
        assert slots[0].connections >= 1 and needed <= 100 - 3  # the superusers' reserve
        asked = options(db_connections=60).sut
        with pytest.raises(Exception, match="do not fit"):
            fitted(asked, lineup(asked, 60), connection)
    finally:
        connection.close()


@pytest.mark.slow
def test_all_runs_against_a_stock_postgres_and_no_app_holds_more_than_its_budget(
    stock_postgres, tmp_path
):
    path, results = benchmark(
        tmp_path,
        *("all", "--deployment", "both", "--routes", "film,review"),
        *("-c", "30", "--duration", "1s", "--warmup", "0", "--no-pgbench"),
        *("--database-url", stock_postgres),
        timeout=400,
    )
    apps = {(a["app"], a["deployment"], a["db_delay_ms"]): a for a in results["apps"]}
    assert len(apps) == 8 and all(a["status"] == "measured" for a in apps.values())
    for peak in results["measurements"]:
        app = apps[(peak["app"], peak["deployment"], peak["db_delay_ms"])]
        held = [run["connections_held"] for run in peak["runs"]]
        assert max(held) <= app["db_connections"], (app, held)
        assert app["workers"] * app["pool_size"] <= app["db_connections"]


@pytest.mark.slow
def test_worker_threads_end_to_end_the_record_says_what_ran(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        *("flask", "falcon", "--worker-threads", "6", "--workers", "2"),
        *("--db-connections", "8", "--routes", "film", "-c", "40"),
        *("--duration", "2s", "--warmup", "0", "--no-pgbench"),
        *("--database-url", database_url),
        timeout=200,
    )
    for app in results["apps"]:
        assert (app["workers"], app["threads"], app["worker_class"]) == (2, 6, "gthread")
        assert (app["pool_size"], app["in_flight"], app["differs"]) == (4, 8, None)
        assert 2 <= app["os_threads"] <= 6 + 3  # the pool's threads, started as needed
    for peak in results["measurements"]:
        assert max(run["connections_held"] for run in peak["runs"]) <= 8
    assert "2 worker(s) x 6 threads (gthread)" in path.with_suffix(".md").read_text()


@pytest.mark.slow
def test_a_configuration_that_is_not_the_one_asked_is_caught(database_url, tmp_path):
    """An operator's WEB_WORKERS left in the environment overrides what the
    budget asked: the read-back counts the worker processes that ran and says so."""
    port = embedded.free_port()
    shape = deployments.shape("tuned", "flask", 2, 4, workers_override=2)
    settings = {**deployments.settings("tuned", "flask", shape), "WEB_WORKERS": "3"}
    with running("flask", port, database_url, tmp_path / "log", 30, **settings) as server:
        asked = Slot("flask", Deployment("tuned"), PRODUCTION, shape, settings, 4)
        target = targets.new_target(asked)
        target.pids, target.log_path = [server.process.pid], server.log_path
        targets.read_back(target)
    assert target.record.workers == 3 and target.record.worker_class == "gthread"
    assert target.record.differs == "3 worker processes run, 2 asked"
    assert readback.worker_pids(target.pid)  # gone now: no crash on a dead tree


def test_the_unbounded_deployment_is_tuned_without_the_admission_limit():
    """--deployment tuned,unbounded: each app twice, side by side, the second
    with QUEUE_BUDGET=0 and otherwise the same environment."""
    sut = bench_options(deployments=["tuned", "unbounded"], apps=APPS).sut
    slots = lineup(sut, DEFAULT_CONNECTIONS)
    by_deployment = {}
    for placed in slots:
        by_deployment.setdefault(placed.deployment.configuration, {})[placed.app] = placed
    assert set(by_deployment) == {"tuned", "unbounded"}
    for app in APPS:
        tuned, unbounded = by_deployment["tuned"][app], by_deployment["unbounded"][app]
        assert "QUEUE_BUDGET" not in tuned.settings  # the app's own default
        assert unbounded.settings == {**tuned.settings, "QUEUE_BUDGET": "0"}
        assert unbounded.shape == tuned.shape and unbounded.server == tuned.server
