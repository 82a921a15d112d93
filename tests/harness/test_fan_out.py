"""The ratings route in the harness (--fan-out, --upstream-delay): the bound
the report holds each app to, what the command line makes of the two
options, the variant named like any app, and (slow) one fan-out cell run
end to end by ./benchmark.sh, its rating service gone afterwards."""

import json
import os
import subprocess

import pytest

from bench import cli
from bench.modes import fan_out, tune
from bench.records import AppRun, Peak, Results, Summary
from infra import apps
from infra.delays import parse_jittered
from tools import ROOT


def summary(requests_per_s):
    latency = {"mean": 10.0, "p50": 9.0, "p90": 12.0, "p99": 20.0, "max": 30.0}
    return Summary(1, requests_per_s, requests_per_s, requests_per_s, latency, 1000, 0, 0)


def app_run(app, calls_out, worker_class=None, workers=5, threads=1):
    return AppRun(
        app,
        "tuned",
        "measured",
        configuration="tuned",
        workers=workers,
        threads=threads,
        worker_class=worker_class,
        fan_out=3,
        upstream_delay="50ms",
        calls_out=calls_out,
    )


def peak(app, requests_per_s, connections=50, db_delay_ms=0.0, runs=None):
    return Peak(
        app,
        "tuned",
        connections,
        "ratings",
        summary(requests_per_s),
        runs or [{"requests_per_s": requests_per_s}],
        db_delay_ms=db_delay_ms,
        fan_out=3,
        upstream_delay="50ms",
    )


def test_one_after_another_waits_the_sum_all_at_once_the_slowest():
    assert fan_out.request_seconds("sequential", 3, "50ms") == pytest.approx(0.150)
    assert fan_out.request_seconds("sequential", 10, "10ms", 0.005) == pytest.approx(0.105)
    # Uniform on [40, 60] ms: the largest of 3 is expected at 40 + 20 x 3/4 = 55 ms.
    assert fan_out.request_seconds("concurrent", 3, "50ms~10ms") == pytest.approx(0.055)
    assert fan_out.request_seconds("concurrent", 1, "50ms") == pytest.approx(0.050)


def test_the_bound_is_in_flight_over_the_time_a_request_waits():
    # Five sync workers, a thread each, three sources 50 ms away one after
    # another, Postgres 2 ms away in one round trip: 5 / (0.150 + 0.002).
    flask = app_run("flask", "sequential", "sync")
    runs = [{"requests_per_s": 30.0, "round_trips_per_request": 1.0}]
    limit, in_flight = fan_out.bound(peak("flask", 30.0, db_delay_ms=2.0, runs=runs), flask)
    assert in_flight == 5 and limit == pytest.approx(5 / 0.152)
    # Threads per worker count (gthread); wrk's connections cap them.
    threaded = app_run("flask", "sequential", "gthread", workers=2, threads=64)
    assert fan_out.bound(peak("flask", 30.0), threaded) == (pytest.approx(50 / 0.150), 50)
    # An event loop: every connection in flight, the calls all at once.
    quart = app_run("quart", "concurrent")
    assert fan_out.bound(peak("quart", 600.0), quart) == (pytest.approx(50 / 0.050), 50)
    assert fan_out.bound(peak("quart", 600.0), None) is None


def test_the_section_states_each_apps_bound_and_says_when_the_upstream_saturated():
    runs = [{"requests_per_s": 30.0, "upstream": {"cpu_share": 0.9, "saturated_s": 2}}]
    results = Results(
        command="./benchmark.sh flask quart --fan-out 3",
        environment={},
        wrk={"routes": ["ratings"], "connections": [50]},
        apps=[app_run("flask", "sequential", "sync"), app_run("quart", "concurrent")],
        measurements=[peak("flask", 30.0, runs=runs), peak("quart", 600.0)],
    )
    text = "\n".join(fan_out.section(results))
    assert "flask: calls its sources one after another" in text
    assert "quart: calls its sources all at once" in text
    assert "It saturated (a second it answered late" in text and "flask 3 x 50ms: 2 s" in text
    assert "| flask | 0 ms | 50ms | 3 |" in text and "33 (5), 90%" in text  # 30 of 5 / 0.15 s
    results.measurements[0].runs = [{"upstream": {"cpu_share": 0.1}}]
    assert "It never saturated" in "\n".join(fan_out.section(results))
    results.measurements = [peak("flask", 30.0)]
    results.measurements[0].fan_out = None  # another route's
    assert fan_out.section(results) == []


def test_fan_out_implies_the_ratings_route_and_the_route_implies_its_sources():
    options, slots = cli.checked(["flask", "quart", "--fan-out", "1,3"])
    assert options.routes == ["ratings"] and options.fan_outs == (1, 3)
    assert options.upstream_delays == (parse_jittered("50ms~10ms"),)
    options, _ = cli.checked(["flask", "--routes", "film,ratings"])
    assert options.fan_outs == (3,)
    options, _ = cli.checked(["flask"])
    assert options.routes == ["film", "films", "review"] and not options.fan_outs
    options, _ = cli.checked(["flask", "--tune", "--fan-out", "3"])
    assert "threads64" in options.sut.deployments
    assert "threads64" not in cli.checked(["flask", "--tune"])[0].sut.deployments
    assert set(tune.SOCKET_WAITS) < set(tune.candidates(fan_out=True))


def test_a_variant_is_served_when_named_and_is_never_one_of_all():
    assert "flask_threads" not in apps.names()
    variant = apps.get("flask_threads")
    assert variant.folder == ROOT / "variants" / "flask_threads_app"
    assert (variant.fan_out, apps.get("flask").fan_out, apps.get("quart").fan_out) == (
        "concurrent",
        "sequential",
        "concurrent",
    )
    options, slots = cli.checked(["flask", "flask_threads", "--fan-out", "3"])
    assert [slot.app for slot in slots] == ["flask", "flask_threads"]
    assert "flask_threads" not in cli.checked(["all"])[0].sut.apps


@pytest.mark.slow
def test_benchmark_measures_a_fan_out_cell_and_stops_its_rating_service(database_url, tmp_path):
    argv = ["flask", "--fan-out", "3", "--upstream-delay", "20ms", "--workers", "2"]
    argv += ["--duration", "2s", "--warmup", "1s", "--no-pgbench", "--database-url", database_url]
    completed = subprocess.run(
        ["./benchmark.sh", *argv, "--results", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [path] = tmp_path.glob("*/*.json")
    results = json.loads(path.read_text())
    [record] = results["apps"]
    assert (record["fan_out"], record["upstream_delay"], record["calls_out"]) == (
        3,
        "20ms",
        "sequential",
    )
    assert record["settings"]["UPSTREAM_FANOUT"].count(",") == 2
    [measured] = results["measurements"]
    assert (measured["route"], measured["fan_out"]) == ("ratings", 3)
    assert measured["summary"]["requests"] > 0 and measured["summary"]["non_2xx"] == 0
    [run] = measured["runs"]
    # Three ratings per answer, give or take the requests in flight at the ends.
    requests = run["ok"] + run["non_2xx"]
    assert 2 * requests <= run["upstream"]["ratings"] <= 4 * requests + 100
    assert run["upstream"]["cpu_us_per_request"] > 0
    # One after another: a call at a time per thread, at the run's worst
    # (read around it; a thread may still serve a request of the warm-up's).
    assert 1 <= run["upstream"]["most_in_flight"] <= record["workers"] * record["threads"]
    assert run["cpu"]["cpu_s"]["upstream"] > 0  # a part of CPU per request (bench/sut/cost.py)
    [upstream] = results["upstreams"]
    assert (upstream["delay"], upstream["ports"]) == ("20ms", 3)
    assert upstream["command"].startswith(".venv/bin/python -m upstream ")
    with pytest.raises(ProcessLookupError):  # stopped with the run
        os.kill(upstream["pid"], 0)
    report = path.with_suffix(".md").read_text()
    assert "## When a request waits on other services" in report
    assert "- flask: calls its sources one after another" in report


def test_calls_one_after_another_past_the_deadline_are_said():
    slow = app_run("flask", "sequential", "sync")
    slow.upstream_delay = "400ms"  # 3 x 400 ms: past the apps' 1 s
    assert fan_out.past_deadline([app_run("flask", "sequential", "sync")]) == []
    [line, _] = fan_out.past_deadline([slow, app_run("quart", "concurrent")])
    assert line.startswith("- flask, 3 x 400ms: past its 1 s deadline")
    slow.settings = {"UPSTREAM_TIMEOUT": "2"}
    assert fan_out.past_deadline([slow]) == []


@pytest.mark.slow
def test_capacity_is_searched_per_fan_out_from_that_fan_outs_peak(database_url, tmp_path):
    """--slo with --fan-out 1,3: one capacity per fan-out, each bracketed from
    the closed-loop peak of its own fan-out, and told apart in the report."""
    argv = ["quart", "--fan-out", "1,3", "--upstream-delay", "20ms", "--workers", "1"]
    argv += ["--slo", "500ms", "--slo-step", "1s", "--duration", "1s", "--warmup", "0"]
    argv += ["--no-pgbench", "--database-url", database_url]
    completed = subprocess.run(
        ["./benchmark.sh", *argv, "--results", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [path] = tmp_path.glob("*/*.json")
    results = json.loads(path.read_text())
    peaks = {m["fan_out"]: m["summary"]["requests_per_s"] for m in results["measurements"]}
    found = {c["fan_out"]: c for c in results["capacity"]}
    assert set(peaks) == set(found) == {1, 3}
    for count, capacity in found.items():
        assert capacity["upstream_delay"] == "20ms"
        assert capacity["peak_rps"] == peaks[count]  # its own fan-out's peak
        assert capacity["steps"][0]["rate"] == max(1.0, float(round(peaks[count])))
    report = path.with_suffix(".md").read_text().split("## Capacity at p99")[1]
    assert "1 source(s) each 20ms away" in report and "3 source(s) each 20ms away" in report
