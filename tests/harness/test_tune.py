"""--tune (bench/modes/tune.py): every configuration of an app searched per
condition, the best chosen by its req/s, then confirmed in rotation."""

import pytest

from bench.modes import tune
from bench.records import Trial
from bench.report import tune as tune_report
from bench.routes import ROUTES
from bench.sut import deployments
from bench.sut.lineup import fits
from bench.sut.targets import Target
from tests.helpers import benchmark


def test_each_app_gets_the_configurations_of_its_kind():
    for app in ("flask", "falcon"):
        assert [d for d in tune.candidates() if fits(app, d)] == [
            "sync",
            "threads4",
            "threads16",
            "gevent",
        ]
    for app in ("quart", "sanic"):
        assert [d for d in tune.candidates() if fits(app, d)] == ["loop1", "loop2", "loop4"]


def test_the_configurations_differ_in_what_their_name_says():
    shapes = {d: deployments.shape(d, "flask", 2, 20) for d in ("sync", "threads4", "threads16")}
    assert [(s.processes, s.threads) for s in shapes.values()] == [(5, 1), (5, 4), (2, 16)]
    assert deployments.shape("gevent", "flask", 2, 20).holds_thread is False
    loops = [deployments.shape(d, "quart", 2, 20) for d in ("loop1", "loop2", "loop4")]
    assert [(s.processes, s.pool) for s in loops] == [(1, 20), (2, 10), (4, 5)]


def trial(app, deployment, rates, chosen=False):
    score = (rates[0] * rates[1]) ** 0.5
    rps = dict(zip(("film", "review"), rates, strict=True))
    return Trial(app, deployment, 10, 0.0, rps, {"film": 1.0, "review": 1.0}, score, chosen)


class Runs:
    connections, repeat = [10], 1


def test_only_the_chosen_configuration_is_confirmed():
    trials = [trial("flask", "threads16", (100, 100)), trial("flask", "threads4", (90, 300), True)]
    rounds = tune.confirm_rounds(Runs(), [ROUTES["film"]], trials)
    assert len(rounds) == 1
    assert rounds[0](Target("flask", "threads4")).connections == 10
    assert rounds[0](Target("flask", "threads16")) is None
    assert tune_report.knob(trials) == pytest.approx((90 * 300) ** 0.5 / 100)


@pytest.mark.slow
def test_tune_searches_at_least_two_configurations_and_keeps_the_curve(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        *("quart", "--tune", "--routes", "film", "-c", "8", "--slo", "p90:500ms"),
        *("--duration", "1s", "--warmup", "0", "--no-pgbench", "--slo-step", "1s"),
        *("--database-url", database_url),
        timeout=300,
    )
    assert results["objective"] == {"percentile": 90.0, "ms": 500.0, "given": True}
    for app in ("quart",):  # Flask's four are as many runs again: the unit tests choose among them
        curve = [t for t in results["tuning"] if t["app"] == app]
        assert len(curve) >= 3 and all(set(t["requests_per_s"]) == {"film"} for t in curve)
        assert all(set(t["capacity_rps"]) == {"film"} for t in curve)
        [chosen] = [t for t in curve if t["chosen"]]  # on an idle app, some kept 500 ms
        assert not chosen["rejected"] and chosen["capacity_rps"]["film"] > 0
        kept = [t for t in curve if not t["rejected"]]
        assert chosen["score"] == max(t["score"] for t in kept)
        assert all(t["capacity_rps"]["film"] == 0 for t in curve if t["rejected"])
        peaks = [p for p in results["measurements"] if p["app"] == app]
        assert {(p["deployment"], p["configuration"]) for p in peaks} == {
            ("best", chosen["deployment"])
        }
        [found] = [c for c in results["capacity"] if c["app"] == app]
        assert (found["deployment"], found["configuration"]) == ("best", chosen["deployment"])
    report = path.with_suffix(".md").read_text()
    assert "## Each app at its best (--tune)" in report and "## best deployment" in report
    assert "The objective: p90 <= 500 ms (--slo)." in report
