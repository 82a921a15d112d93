"""A run that cannot go on keeps what it measured: bench/run.py saves the
records of the stages before the failure, says why it stopped, and exits
non-zero; pgbench's ceiling gives itself the time its connections take."""

import json

import pytest

from bench import cli, run
from bench.errors import BenchmarkError
from bench.modes import ceiling
from bench.records import Ceiling


def test_a_run_that_stops_saves_what_it_measured(database_url, tmp_path, monkeypatch):
    argv = ["quart", "--db-delay", "0,1ms", "--database-url", database_url]
    options, slots = cli.checked([*argv, "--results", str(tmp_path), "--no-pgbench"])
    delays = []

    def measure_at(stage, slots, found, results_dir, stamp):
        if delays:
            raise BenchmarkError("the second delay failed")
        delays.append(stage.delay)
        run.add(found, {"pgbench": [Ceiling("film", 20, 100.0, 1.0, 0, 20, "pgbench ...")]})
        return []

    monkeypatch.setattr(run, "measure_at", measure_at)
    with pytest.raises(BenchmarkError, match="what was measured before is saved"):
        run.run(options, slots)
    [path] = tmp_path.glob("*/*.json")
    data = json.loads(path.read_text())
    assert data["stopped"] == "the second delay failed" and len(data["pgbench"]) == 1
    assert "**The run stopped before its end:** the second delay failed" in (
        path.with_suffix(".md").read_text()
    )


def test_nothing_measured_saves_nothing(database_url, tmp_path, monkeypatch):
    argv = ["quart", "--database-url", database_url, "--results", str(tmp_path)]
    options, slots = cli.checked([*argv, "--no-pgbench"])

    def measure_at(*args):
        raise BenchmarkError("the first start failed")

    monkeypatch.setattr(run, "measure_at", measure_at)
    with pytest.raises(BenchmarkError, match="^the first start failed$"):
        run.run(options, slots)
    assert not list(tmp_path.glob("*/*.json"))


@pytest.mark.parametrize(
    ("clients", "threads", "delay", "expected"),
    [(100, 2, 0.0, 2), (100, 2, 0.001, 3), (100, 2, 0.020, 6), (4, 2, 0.020, 3)],
)
def test_pgbench_runs_as_long_as_its_connections_take_beside_its_load(
    clients, threads, delay, expected
):
    # 50 clients a thread, 4 round trips each, 20 ms apart: 4 s before the load.
    assert ceiling.with_connecting(2, clients, threads, delay) == expected
