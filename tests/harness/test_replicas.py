"""./benchmark.sh --replicas: N copies of an app's server behind nginx, each
with its share of the app's workers and connections, measured as one target.
A sync app (gunicorn) and an async one (uvicorn), started as a run starts
them (bench/sut/targets.start) and by ./benchmark.sh end to end."""

import contextlib
import urllib.request

import pytest

from bench.sut import targets
from bench.sut.lineup import Deployment, slot
from tests.helpers import bench_options, benchmark
from tools import proxy

pytestmark = pytest.mark.slow  # starts the apps under their production servers

APPS = ("flask", "quart")  # one on gunicorn's sync workers, one on an event loop
BUDGET = 8  # connections for the app, all its copies


def options(app):
    return bench_options(
        apps=[app],
        deployments=["tuned"],
        routes=["film"],
        connections=[4],
        pin=None,
        command=f"./benchmark.sh {app} --replicas 2",
        replicas=(2,),
    )


def slot_of(app, copies):
    """app's Slot in `copies` copies of the tuned deployment, under BUDGET."""
    return slot(options(app).sut, app, Deployment("tuned", copies > 1, copies), BUDGET)


@pytest.mark.parametrize("app", APPS)
def test_every_copy_answers_through_nginx(app, database_url, tmp_path):
    run = options(app)
    slot = slot_of(app, 2)
    target = targets.new_target(slot)
    with contextlib.ExitStack() as cleanup:
        targets.start(cleanup, run.sut, target, database_url, tmp_path, "t")
        assert target.measurable, target.record.reason
        answered = []
        for _ in range(20):
            with urllib.request.urlopen(f"{target.url}/films/995/", timeout=10) as response:
                assert response.status == 200
                answered.append(response.headers["X-Upstream-Addr"])
        logs = sorted(tmp_path.glob(f"t-{app}-tuned-x2.[0-9].log"))
        # nginx takes turns (round-robin): each copy answered about half.
        counts = [answered.count(address) for address in set(answered)]
        assert len(logs) == 2 and len(counts) == 2 and min(counts) >= 5, answered
    record = target.record
    assert (record.replicas, record.proxy) == (2, proxy.version())
    # 2 copies share the app's processes and its connection budget.
    whole = slot_of(app, 1).shape
    assert record.workers == max(1, round(whole.processes / 2))
    assert 2 * record.workers * record.pool_size <= BUDGET
    assert record.db_connections == BUDGET
    # What ran is read from each copy: the same command, on the ports nginx used.
    command, _, listed = record.server_command.rpartition(" (x 2 on ports ")
    assert sorted(listed.rstrip(")").split(", ")) == sorted(a.rsplit(":")[1] for a in set(answered))
    assert command.split()[-1] == "--no-control-socket" or "--no-access-log" in command


def test_benchmark_measures_two_copies_of_each_app_and_loses_nothing(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        *APPS,
        "--replicas",
        "1,2",
        "--routes",
        "review",
        "-c",
        "4",
        "--db-connections",
        "4",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--no-pgbench",
        "--database-url",
        database_url,
    )
    ran = {(a["app"], a["deployment"]): a for a in results["apps"]}
    assert {key: a["replicas"] for key, a in ran.items()} == {
        ("flask", "tuned"): 1,
        ("quart", "tuned"): 1,
        ("flask", "tuned x2"): 2,
        ("quart", "tuned x2"): 2,
    }
    assert all(a["status"] == "measured" for a in ran.values())
    for measurement in results["measurements"]:
        ledger, summary = measurement["ledger"], measurement["summary"]
        assert summary["requests"] > 0 and summary["non_2xx"] == 0, measurement
        assert ledger["rows_added"] - ledger["responses_2xx"] == ledger["in_flight"]
    report = path.with_suffix(".md").read_text()
    assert "## Replicas: req/s and p99 against copies" in report
    assert "x 2 replicas behind nginx" in report
