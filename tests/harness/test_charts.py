"""The charts (bench/report/charts/) and the decision (bench/modes/db_delay.py):
every committed run whose charts are published redraws them from its JSON,
as PNGs of the README's width; the decision picks, per app and condition,
the configuration with the most req/s and reports that same run's p99. No
pixels are compared: what a chart shows is judged by opening it."""

import struct

import pytest

from bench.modes import charts, db_delay
from bench.records import AppRun, Peak, Results, Summary, load
from bench.redraw import main
from bench.report.charts import drawn
from bench.report.charts.decision import draw_decision
from tools import ROOT

RESULTS = ROOT / "docs" / "results"
# The runs whose charts docs/ publishes: each redraws every PNG committed beside it.
PUBLISHED = sorted(
    {png.with_name(png.name.split(".")[0]) for png in RESULTS.glob("*.png")},
)


def run_of(stem):
    """The JSON a committed PNG was drawn from: the longest run name its name
    starts with (a PNG is the run's name and the chart's suffix)."""
    runs = [path for path in RESULTS.glob("*.json") if stem.name.startswith(path.stem)]
    assert runs, f"no JSON for {stem.name}"
    return max(runs, key=lambda path: len(path.stem))


def size(path):
    """(width, height) in pixels, from the PNG's header."""
    return struct.unpack(">II", path.read_bytes()[16:24])


def published_runs():
    """The JSON of every published run."""
    return sorted({run_of(stem) for stem in PUBLISHED})


# Every published run redrawn: seconds of CPU together (dozens of panels in
# some), so in the slow tier (CI's); the fast tier draws the charts of the
# tests above and below.
@pytest.mark.slow
@pytest.mark.parametrize("json_path", published_runs(), ids=lambda path: path.stem)
def test_a_published_run_redraws_its_charts_at_the_readme_width(json_path, tmp_path):
    pngs = RESULTS.glob(json_path.stem + "*.png")  # a longer run name's are its own
    committed = {png.name for png in pngs if run_of(png) == json_path}
    suffixes = {name.removeprefix(json_path.stem) for name in committed}
    paths = drawn(load(json_path), tmp_path / json_path.stem, charts(), suffixes)
    assert {path.name for path in paths} == committed
    for path in paths:
        width, height = size(path)
        assert 900 <= width <= 1400, path.name
        assert 300 <= height <= 20000, path.name
        assert path.stat().st_size > 20_000, path.name  # not an empty canvas


def summary(requests_per_s, p99):
    latency = {"mean": p99 / 3, "p50": p99 / 4, "p75": p99 / 3, "p90": p99 / 2, "p99": p99}
    return Summary(1, requests_per_s, requests_per_s, requests_per_s, latency, 1000, 0, 0)


def grid(rows):
    """Results of a hand-made delay x connections grid: rows of (app,
    deployment, delay ms, connections, route, req/s, p99 ms)."""
    environment = {"cpu_count": 2, "cpu_model": "test", "date": "2026-11-23", "git_commit": None}
    apps = {(app, deployment): AppRun(app, deployment, "measured") for app, deployment, *_ in rows}
    return Results(
        command="./benchmark.sh flask quart --db-delay 0,20ms -c 10,100",
        environment=environment,
        wrk={"routes": ["film", "review"]},
        apps=list(apps.values()),
        measurements=[
            Peak(app, deployment, connections, route, summary(rps, p99), db_delay_ms=delay)
            for app, deployment, delay, connections, route, rps, p99 in rows
        ],
    )


FAIR = grid(
    [
        ("flask", "sync", 0, 10, "film", 1500, 20),
        ("flask", "threads", 0, 10, "film", 1400, 15),
        ("flask", "sync", 20, 10, "film", 70, 250),
        ("flask", "threads", 20, 10, "film", 900, 190),
        ("flask", "threads", 20, 100, "film", 940, 400),
        ("flask", "sync", 20, 100, "film", 56, 2600),
        ("flask", "sync", 20, 10, "review", 75, 140),
        ("flask", "threads", 20, 10, "review", 60, 90),
        ("quart", "uvicorn", 0, 10, "film", 2700, 35),
        ("quart", "uvicorn", 20, 10, "film", 220, 52),
        ("quart", "uvicorn", 20, 100, "film", 830, 245),
    ]
)


def test_the_best_configuration_has_the_most_requests_and_keeps_its_own_p99():
    best = db_delay.best(FAIR, "film")
    assert best[("flask", 0, 10)].deployment == "sync"  # more req/s, though a worse p99
    assert best[("flask", 0, 10)].summary.latency_ms["p99"] == 20
    assert best[("flask", 20, 10)].deployment == "threads"
    assert best[("flask", 20, 100)].summary.latency_ms["p99"] == 400
    assert best[("quart", 20, 100)].summary.requests_per_s == 830
    assert ("quart", 0, 100) not in best  # not measured, not invented
    assert db_delay.best(FAIR, "review")[("flask", 20, 10)].deployment == "sync"  # per route


def test_the_decision_table_names_each_winning_configuration():
    text = "\n".join(db_delay.decision(FAIR))
    assert "| flask | 20 ms | 900 | 190.0 | threads | 940 | 400.0 | threads |" in text
    assert "| flask | 0 ms | 1,500 | 20.0 | sync | - | - | - |" in text
    assert "| flask | 20 ms | 75 | 140.0 | sync | - | - | - |" in text  # POST /reviews/
    assert text.index("GET /films/995/") < text.index("POST /reviews/")


def test_no_decision_without_several_delays(tmp_path):
    direct = grid([("flask", "sync", 0, 10, "film", 1500, 20)])
    assert db_delay.decision(direct) == []
    assert draw_decision(direct, tmp_path / "x.png") is None
    path = draw_decision(FAIR, tmp_path / "fair.png")
    assert path.exists() and size(path)[0] >= 900


def test_the_entry_point_redraws_beside_the_json(tmp_path, capsys):
    assert main([]) == 2
    copy = tmp_path / "run.json"
    copy.write_text((RESULTS / "2026-11-23-tuned-repeat5-a.json").read_text())
    assert main([str(copy)]) == 0
    assert (tmp_path / "run.png").exists()
    assert "drew" in capsys.readouterr().out


def test_with_capacities_the_decision_chart_shows_them_and_the_cpu_per_request():
    """A run with --slo: each app at its best by capacity, the chart's top
    panel its capacity with the interval, the bottom the app's CPU per
    request; a run without: req/s and p99, as before."""
    from bench.report.charts import decision
    from bench.report.select import best

    results = load(RESULTS / "2026-11-27-flask-tune.json")
    [(top, capacity), (bottom, cpu)] = decision.metrics(results)
    assert top.startswith("capacity, req/s at p99 <= 100 ms") and bottom.startswith("CPU µs")
    winners = best(results, "film")
    peak = winners[("flask", 5.0, 100)]
    [found] = [c for c in results.capacity if c.route == "film" and c.db_delay_ms == 5.0]
    assert capacity(results, peak) == (found.capacity_rps["value"], found.capacity_rps["ci95"])
    assert cpu(results, peak) > 0
    older = load(RESULTS / "2026-11-23-fair-grid.json")
    assert decision.metrics(older) is decision.CLOSED
