"""End to end: ./benchmark.sh measures each app briefly and writes its results."""

import json

import pytest

from bench.sut import database
from db import embedded
from tests.helpers import benchmark
from tools.serve import APPS, running

ROUTES = {"film", "films", "review"}
pytestmark = pytest.mark.slow  # runs ./benchmark.sh, which starts the app


@pytest.fixture(scope="module")
def every_app(database_url, tmp_path_factory):
    """One run of the four apps side by side, as a user starts it (all)."""
    return benchmark(
        tmp_path_factory.mktemp("every-app"),
        "all",
        *("--duration", "1s", "--warmup", "0", "--workers", "2"),
        *("--database-url", database_url),
    )


@pytest.mark.parametrize("app", APPS)
def test_benchmark_measures_every_route_and_loses_nothing(app, every_app):
    path, results = every_app
    [record] = [record for record in results["apps"] if record["app"] == app]
    assert (record["status"], record["workers"]) == ("measured", 2)
    measurements = {m["route"]: m for m in results["measurements"] if m["app"] == app}
    assert set(measurements) == ROUTES
    for measurement in measurements.values():
        summary = measurement["summary"]
        assert summary["requests"] > 0 and summary["non_2xx"] == 0, measurement
        cpu = measurement["cpu_us_per_request"]
        assert {"app", "generator"} <= set(cpu) and all(v > 0 for v in cpu.values()), cpu
    ledger = measurements["review"]["ledger"]
    assert ledger["rows_added"] - ledger["responses_2xx"] == ledger["in_flight"]
    assert 0 <= ledger["in_flight"] <= 20 and ledger["responses_2xx"] > 0


def test_a_run_writes_its_ceiling_report_charts_and_page(every_app):
    path, results = every_app
    assert results["environment"]["git_commit"] and results["database"]["fsync"]
    assert {p["route"] for p in results["pgbench"]} == ROUTES
    for floor in results["pgbench"]:
        assert floor["cpu_us_per_transaction"]["generator"] > 0, floor
    assert path.with_suffix(".md").read_text().startswith("# Benchmark")
    assert path.with_suffix(".png").stat().st_size > 10_000
    assert f'"command":{json.dumps(results["command"])}' in (path.parent / "index.html").read_text()


def test_every_app_has_its_memory_at_rest_and_at_the_end_of_each_run(database_url, tmp_path):
    """PSS of the whole process tree: a forked sync server and an event loop."""
    path, results = benchmark(
        tmp_path,
        "flask",
        "sanic",
        "--routes",
        "film,review",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--workers",
        "2",
        "--no-pgbench",
        "--database-url",
        database_url,
    )
    assert [record["app"] for record in results["apps"]] == ["flask", "sanic"]
    for record in results["apps"]:
        # Wide margins: a Python server and its workers, not nothing, not gigabytes.
        assert 10 < record["pss_rest_mib"] < 2000, record
    assert len(results["measurements"]) == 4
    for measurement in results["measurements"]:
        [run] = measurement["runs"]
        assert 10 < run["pss_mib"] < 2000 and measurement["pss_mib"] == run["pss_mib"]
    text = path.with_suffix(".md").read_text()
    assert "| PSS MiB rest -> end |" in text
    text = text.split("## CPU per request, by part")[0]  # its rows name the apps too
    rows = [line for line in text.splitlines() if line.startswith(("| flask |", "| sanic |"))]
    assert len(rows) == 4 and all(" -> " in row for row in rows)


def test_every_part_of_a_run_has_its_cpu_and_the_parts_add_up_to_the_machine(
    database_url, db, tmp_path
):
    """nginx, PgBouncer and a delay proxy in front of one app: each part has its
    CPU per request, and the parts, the harness and every other process add
    up to the machine's busy CPU (/proc/stat) within 25 %. Alone on the
    machine (others under 5 %), the parts alone do, within 15 % (the report's
    check says 10 %: bench/sut/cost.py)."""
    path, results = benchmark(
        tmp_path,
        "flask",
        "--proxy",
        "on",
        "--pgbouncer",
        "--db-delay",
        "1ms",
        "--routes",
        "film",
        "--duration",
        "2s",
        "--warmup",
        "0",
        "--workers",
        "2",
        "--database-url",
        database_url,
    )
    [peak] = results["measurements"]
    [floor] = results["pgbench"]
    parts = {"app", "nginx", "pgbouncer", "delay_proxy", "generator"}
    if database.postmaster(db):  # a Postgres on this machine (not TEST_DATABASE_URL's elsewhere)
        parts.add("postgres")
    assert set(peak["cpu_us_per_request"]) == parts
    assert all(value > 0 for value in peak["cpu_us_per_request"].values()), peak
    assert set(floor["cpu_us_per_transaction"]) == parts & {"postgres", "delay_proxy", "generator"}
    for used in (peak["runs"][0]["cpu"], floor["cpu"]):
        busy, seconds = used["machine_busy_s"], used["cpu_s"]
        # Every process together: 92-103 % on this shared machine, once 82 %
        # (a CI rehearsal: 3.25 of 3.96 s; a process that exits inside the
        # window takes its CPU with it), hence a wider margin.
        assert sum(seconds.values()) == pytest.approx(busy, rel=0.25), used
        if seconds["others"] < 0.05 * busy:  # alone on the machine: the parts are all of it
            ours = sum(value for part, value in seconds.items() if part != "others")
            # within 15 %: the report's own check is 10 % (bench/sut/cost.py), but
            # a generator's CPU is read when it has exited, start-up included;
            # below, by at most the interrupts handled on an idle core, which
            # no process is charged for (seen: 17 % of it through nginx,
            # PgBouncer and the delay proxy)
            assert ours <= busy * 1.15, used
            assert ours + used["interrupts_s"] >= busy * 0.85, used
    assert "## CPU per request, by part" in path.with_suffix(".md").read_text()


def test_benchmark_measures_a_server_already_running(database_url, tmp_path):
    """--target: the server is not started here (compose's bench service)."""
    port = embedded.free_port()
    with running("quart", port, database_url, tmp_path / "quart.log", web_workers=1) as server:
        _, results = benchmark(
            tmp_path,
            "quart",
            "--target",
            server.url,
            "--database-url",
            database_url,
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--no-pgbench",
        )
    [record] = results["apps"]
    assert (record["deployment"], record["status"]) == ("external", "measured")
    ledger = {m["route"]: m for m in results["measurements"]}["review"]["ledger"]
    assert ledger["responses_2xx"] > 0 and 0 <= ledger["in_flight"] <= 20


def test_rate_runs_open_loop_at_the_rates_given_and_loses_nothing(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        "sanic",
        "--rate",
        "50,100",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--routes",
        "film,review",
        "--workers",
        "1",
        "--no-pgbench",
        "--database-url",
        database_url,
    )
    assert results["measurements"] == []  # rates given: no closed-loop peak needed
    rows = {(row["route"], row["rate"]): row["report"] for row in results["openloop"]}
    assert set(rows) == {("film", 50), ("film", 100), ("review", 50), ("review", 100)}
    for report in rows.values():
        assert report["sent"] > 0 and report["success_rate"] == 1.0, report["errors"]
    for rate in (50, 100):
        ledger = rows[("review", rate)]["ledger"]
        assert ledger["rows_added"] == ledger["responses_2xx"] == rows[("review", rate)]["ok"]
    assert results["generator"]["name"] == "bench.load.openloop"
    assert all(row["pss_mib"] == row["report"]["pss_mib"] > 10 for row in results["openloop"])
    assert "Latency at a fixed load" in path.with_suffix(".md").read_text()
    assert (path.with_name(path.stem + "-latency.png")).stat().st_size > 10_000


def test_a_server_matrix_offers_every_pair_one_rate_and_draws_its_chart(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        "flask",
        "--server",
        "gunicorn-sync,wsgiref",
        "--rate",
        "auto",
        "--routes",
        "film",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--workers",
        "1",
        "--no-pgbench",
        "--database-url",
        database_url,
    )
    peaks = {m["deployment"]: m["summary"]["requests_per_s"] for m in results["measurements"]}
    assert set(peaks) == {"gunicorn-sync", "wsgiref"}
    # One rate for both pairs, from the sane one: wsgiref is the floor.
    assert {row["rate"] for row in results["openloop"]} == {round(0.75 * peaks["gunicorn-sync"])}
    assert {row["deployment"] for row in results["openloop"]} == set(peaks)
    text = path.with_suffix(".md").read_text()
    assert "## The server matrix" in text and "req/s offered: success / p99 / max ms" in text
    assert "### Memory: PSS MiB at rest -> the largest at the end of a run" in text
    assert (path.with_name(path.stem + "-matrix.png")).stat().st_size > 10_000


def test_db_delay_measures_every_app_at_every_delay_within_its_bound(database_url, tmp_path):
    delay_ms, connections = 5, 4
    path, results = benchmark(
        tmp_path,
        "flask",
        "quart",
        "--db-delay",
        f"0,{delay_ms}ms",
        "-c",
        str(connections),
        "--routes",
        "film,review",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--workers",
        "1",
        "--worker-threads",
        "1",
        "--database-url",
        database_url,
    )
    rows = {(m["app"], m["db_delay_ms"], m["route"]): m for m in results["measurements"]}
    assert set(rows) == {
        (app, delay, route)
        for app in ("flask", "quart")
        for delay in (0, 5)
        for route in ("film", "review")
    }
    for (app, delay, route), m in rows.items():
        [run] = m["runs"]
        assert m["summary"]["non_2xx"] == 0 and run["connections_held"] >= 1
        if app == "flask":  # one process, one thread: one request, one connection at a time
            assert run["connections_held"] == 1
        if route == "review":  # the books balance through the proxy too
            assert 0 <= m["ledger"]["in_flight"] <= connections and m["ledger"]["responses_2xx"] > 0
        if not delay:
            assert "round_trips_per_request" not in run  # direct: no proxy to count them
            continue
        trips = run["round_trips_per_request"]
        if route == "film":  # one SELECT, in autocommit, and no reset query
            assert 0.9 <= trips <= 1.3, trips
        # Little's law: no more than the requests in flight over their time in round trips.
        in_flight = 1 if app == "flask" else connections
        assert m["summary"]["requests_per_s"] <= in_flight / (trips * delay_ms / 1000) * 1.1
    pgbench = {(p["db_delay_ms"], p["route"]): p["tps"] for p in results["pgbench"]}
    assert pgbench[(5, "film")] <= connections / (delay_ms / 1000) * 1.05  # through a proxy too
    assert [a["db_delay_ms"] for a in results["apps"]] == [0, 0, 5, 5]
    assert results["delay_proxy"] and results["db_delays_ms"] == [0, 5]
    text = path.with_suffix(".md").read_text()
    assert "## When async pays: database delay x connections" in text
    assert "| round trips | PSS MiB rest -> end |" in text
    assert "### The decision: each app at its best" in text
    for suffix in ("-sweep.png", "-decision.png"):
        assert (path.with_name(path.stem + suffix)).stat().st_size > 10_000
