"""The results explorer's page, built in process (bench/report/explorer/):
every committed run in it with the marks docs/results.md gives, the
committed page not stale, the vendored chart library the one its README
names, the page small, self-contained and safe against the text it inlines,
and the capacity issue's fields shown when a run carries them. The page in a
real browser: tests/harness/test_explorer_browser.py."""

import hashlib
import json
import re

import pytest

from bench import records
from bench.report import explorer
from bench.report.explorer import catalogue, cells, model
from tests.explorer_data import synthetic
from tools import ROOT

RESULTS = ROOT / "docs" / "results"
VENDOR = ROOT / "bench" / "report" / "explorer" / "vendor" / "uplot"
DATA = re.compile(r'<script id="explorer-data" type="application/json">(.*?)</script>', re.S)


def page_data(html):
    """The data a page inlines, as its script reads it."""
    return json.loads(DATA.search(html)[1].replace("<\\/", "</"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = explorer.build(RESULTS, tmp_path_factory.mktemp("explorer") / "index.html")
    return path.read_text()


def test_the_vendored_library_is_the_one_its_readme_names():
    rows = re.findall(
        r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", (VENDOR / "README.md").read_text(), re.M
    )
    assert {name for name, _ in rows} == {"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"}
    for name, digest in rows:
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    assert "MIT License" in (VENDOR / "LICENSE").read_text()


def test_the_committed_page_is_rebuilt_from_the_committed_json(built):
    assert (RESULTS / "index.html").read_text() == built, (
        "docs/results/index.html is stale: python -m bench.report.explorer docs/results"
    )


def test_every_committed_run_is_in_the_page_with_every_figure(built):
    runs = {run["id"]: run for run in page_data(built)["runs"]}
    saved = [path for path in sorted(RESULTS.glob("*.json")) if catalogue.is_run(path)]
    assert set(runs) == {path.stem for path in saved} and len(runs) >= 9
    for path in saved:
        data = json.loads(path.read_text())
        cells = runs[path.stem]["cells"]
        assert len(cells) == len(data["measurements"]) + len(data.get("openloop") or [])
        assert runs[path.stem]["facts"]["command"] == data["command"]


def test_superseded_runs_are_marked_as_docs_results_md_marks_them(built):
    runs = {run["id"]: run for run in page_data(built)["runs"]}
    assert runs["2026-11-23-db-delay-grid"]["superseded"].startswith("History:")
    assert runs["2026-11-23-all-both"]["superseded"].startswith("History:")
    assert runs["2026-11-23-fair-grid"]["superseded"].startswith("History:")
    assert runs["2026-11-27-capacity-grid"]["superseded"] is None
    assert runs["2026-11-27-capacity-grid"]["title"].startswith("The capacity grid: each app")
    assert runs["2026-11-23-alternatives-flask"]["superseded"].startswith("History:")
    name = "2026-11-23-alternatives-quart-asyncpg"  # a run docs/results.md does not link
    assert runs[name]["title"] == name and runs[name]["superseded"] is None


def test_the_page_without_data_is_small_and_fetches_nothing():
    html = explorer.page([], "Benchmark results")
    assert len(html.encode()) < 1_000_000
    assert not re.search(r"""(src|href)=["'](?!data:)""", html)  # nothing loaded from elsewhere
    assert "connect-src 'none'" in html


def test_inlined_text_cannot_close_the_script(tmp_path):
    data = synthetic()
    data["command"] = "./benchmark.sh flask </script><script>alert(1)</script>"
    html = explorer.write(data, tmp_path / "index.html").read_text()
    assert html.count("</script>") == 2  # the data's and the scripts' own
    assert page_data(html)["runs"][0]["facts"]["command"] == data["command"]


def test_a_run_with_capacity_intervals_and_cpu_carries_them_to_the_page(tmp_path):
    html = explorer.write(synthetic(), tmp_path / "index.html").read_text()
    [run] = page_data(html)["runs"]
    cell = run["cells"][0]
    assert cell["capacity"] == {
        "value": 320.0,
        "ci95": [300.0, 340.0],
        "objective": {"percentile": 99, "ms": 100},
    }
    assert cell["cpu_us"]["generator"] == {"value": 50.0, "ci95": [45.0, 55.0]}
    assert cell["cpu_us"]["app"] == {"value": 900.0, "ci95": None}
    assert (cell["interval_kind"], cell["interval"]) == ("ci95", [380.0, 420.0])
    assert len(run["ratios"]) == 2 and run["noise_floor"] == {"value": 1.0, "ci95": [0.98, 1.02]}


def test_a_run_without_them_has_none(built):
    """The committed runs from before capacity and CPU were measured show
    none; those measured with --slo show their capacities."""
    for run in page_data(built)["runs"]:
        data = json.loads((RESULTS / f"{run['id']}.json").read_text())
        capacities = [cell["capacity"] for cell in run["cells"] if cell["capacity"]]
        assert bool(capacities) == bool(data.get("capacity")), run["id"]
        measured = [*(data.get("measurements") or []), *(data.get("openloop") or [])]
        if data.get("capacity") or any(m.get("cpu_us_per_request") for m in measured):
            continue
        assert not run["ratios"] and run["noise_floor"] is None
        for cell in run["cells"]:
            assert cell["capacity"] is None and cell["cpu_us"] is None
            assert cell["interval_kind"] in (None, f"min-max of {cell['runs']} runs")


def test_the_spectrum_keeps_the_nines_apart():
    """99.9997 % stays short of 100 % (rounded as a percentile, it would not)."""
    points = cells.spectrum([[0.0, 1.0], [50.0, 2.0], [99.9997, 9.0], [100.0, 10.0]])
    assert [round(nines, 3) for nines, _ in model.rounded(points)] == [0.301, 5.523]


def test_a_run_page_is_written_from_its_results(tmp_path):
    results = records.load(RESULTS / "2026-11-23-fair-grid.json")  # what save() passes
    html = explorer.write(results, tmp_path / "run.html").read_text()
    [run] = page_data(html)["runs"]
    assert run["id"] == "run" and run["superseded"] is None and len(run["cells"]) == 64
