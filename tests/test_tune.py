"""--tune (bench/modes/tune.py): every configuration of an app searched per
condition, the best chosen by its req/s, then confirmed in rotation."""

import pytest

from bench.modes import tune
from bench.records import Trial
from bench.routes import ROUTES
from bench.stack import deployments
from bench.stack.lineup import fits
from bench.stack.targets import Target
from tests.test_benchmark_smoke import benchmark


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
    trials = [trial("flask", "sync", (100, 100)), trial("flask", "threads4", (90, 300), True)]
    rounds = tune.confirm_rounds(Runs(), [ROUTES["film"]], trials)
    assert len(rounds) == 1
    assert rounds[0](Target("flask", "threads4")).connections == 10
    assert rounds[0](Target("flask", "sync")) is None
    assert tune.knob(trials) == pytest.approx((90 * 300) ** 0.5 / 100)


@pytest.mark.slow
def test_tune_searches_at_least_two_configurations_and_keeps_the_curve(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        *("flask", "quart", "--tune", "--routes", "film,review", "-c", "8"),
        *("--duration", "1s", "--warmup", "0", "--no-pgbench"),
        *("--database-url", database_url),
        timeout=300,
    )
    for app in ("flask", "quart"):
        curve = [t for t in results["tuning"] if t["app"] == app]
        assert len(curve) >= 3 and all(
            set(t["requests_per_s"]) == {"film", "review"} for t in curve
        )
        [chosen] = [t for t in curve if t["chosen"]]
        assert chosen["score"] == max(t["score"] for t in curve)
        peaks = [p for p in results["measurements"] if p["app"] == app]
        assert {(p["deployment"], p["configuration"]) for p in peaks} == {
            ("best", chosen["deployment"])
        }
        assert {p["route"] for p in peaks} == {"film", "review"}
    review = [p for p in results["measurements"] if p["route"] == "review"]
    assert all(
        p["ledger"]["rows_added"] - p["ledger"]["responses_2xx"] == p["ledger"]["in_flight"]
        for p in review
    )
    report = path.with_suffix(".md").read_text()
    assert "## Each app at its best (--tune)" in report and "## best deployment" in report
