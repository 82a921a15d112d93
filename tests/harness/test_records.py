"""The results as typed records (bench/records/): every committed result in
docs/results/ loads through the reader, survives its JSON form unchanged, and
renders; a file from a newer harness is refused, not half read."""

import dataclasses
import json

import pytest

from bench import records
from bench.modes import report
from tools import ROOT

SAVED = sorted(
    path
    for path in (ROOT / "docs" / "results").glob("*.json")
    if "measurements" in json.loads(path.read_text())  # not docs/examples' JSON
)


def test_the_committed_results_are_there():
    assert len(SAVED) >= 9


@pytest.mark.slow  # every committed result rendered: seconds of CPU together
@pytest.mark.parametrize("path", SAVED, ids=[path.stem for path in SAVED])
def test_a_committed_result_loads_round_trips_and_renders(path):
    results = records.load(path)
    # A run at --rate R alone has no closed-loop peak: its open loop's rates instead.
    assert results.measurements or results.openloop
    assert all(isinstance(peak, records.Peak) for peak in results.measurements)
    assert all(isinstance(peak.summary, records.Summary) for peak in results.measurements)
    assert all(isinstance(profile, records.Profile) for profile in results.profiles)
    assert all(isinstance(app, records.AppRun) for app in results.apps)
    assert all(isinstance(rate, records.Rate) for rate in results.openloop)
    assert all(isinstance(ceiling, records.Ceiling) for ceiling in results.pgbench)
    again = records.from_json(records.to_json(results))
    assert again.schema == records.SCHEMA
    assert dataclasses.replace(again, schema=results.schema) == results
    assert report(results).startswith("# Benchmark")


def test_a_schema_1_file_keeps_its_fields_in_schema_2():
    raw = json.loads(SAVED[0].read_text())
    written = json.loads(records.to_json(records.load(SAVED[0])))
    assert raw["schema"] == 1 and written["schema"] == 2
    assert written["measurements"][0]["summary"] == raw["measurements"][0]["summary"]
    assert set(raw) <= set(written)


def test_an_unknown_field_is_refused():
    raw = json.loads(SAVED[0].read_text())
    raw["measurements"][0]["from_the_future"] = 1
    with pytest.raises(ValueError, match="Peak has no field from_the_future"):
        records.from_json(json.dumps(raw))
    with pytest.raises(ValueError, match="not the results"):
        records.from_json('{"command": "x"}')
