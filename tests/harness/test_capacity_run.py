"""The capacity search against real servers, end to end through
./benchmark.sh: a target of known capacity, and the A/A control.

One Flask sync worker (gunicorn's sync worker class: one process, one
thread) behind a 20 ms delay proxy
serves one request at a time, each waiting round trips x 20 ms on Postgres:
its capacity is about 1 / (round trips x 20 ms), whatever the machine does
meanwhile (a few ms of its own per request, more on a busy machine: the
margin below). The objective, a p90 of 250 ms, leaves room for the busy
machine's stalls of 50-100 ms (a step of a second at 40 req/s has 40
answers: its p99 is its slowest); a queue beyond the capacity outgrows it
within the step. Its 1 s steps are short enough for noise to flatter the
search (the highest of short steps that held): each capacity ends on a
confirmation, a run of 3 steps' length that held. Named twice, it is the
A/A control: the two arms' capacities, in one rotation, must agree within
their interval. Wide margins: no speed is
asserted, only that the instrument finds what the delay imposes."""

import pytest

from tests.helpers import benchmark

pytestmark = pytest.mark.slow


def test_the_search_finds_a_known_capacity_and_the_a_a_interval_holds_1(database_url, tmp_path):
    path, results = benchmark(
        tmp_path,
        *("flask", "flask", "--server", "gunicorn-sync", "--workers", "1"),
        *("--db-delay", "20ms", "-c", "4"),
        *("--slo", "p90:250ms", "--slo-step", "1s", "--repeat", "3", "--routes", "film"),
        *("--duration", "1s", "--warmup", "0", "--no-pgbench"),
        *("--database-url", database_url),
        timeout=240,
    )
    found = {c["app"]: c for c in results["capacity"]}
    assert set(found) == {"flask#1", "flask#2"}
    for arm in found.values():
        trips = [s["round_trips"] for s in arm["steps"] if s["round_trips"]]
        expected = 1 / (sum(trips) / len(trips) * 0.020)
        value = arm["capacity_rps"]["value"]
        assert 0.5 * expected <= value <= 1.2 * expected, (expected, arm["steps"])
        low, high = arm["capacity_rps"]["ci95"]
        assert low <= value <= high
        confirmation = arm["confirmation"]
        assert confirmation["seconds"] == 3 and confirmation["held"], confirmation
        assert confirmation["rate"] == value <= confirmation["searched"]
        assert confirmation["percentile_ms"] <= 250
        assert confirmation["runs"][-1]["answered"] >= 3 * value * 0.9  # one run of 3 s
        assert arm["capacity_rps"]["objective"] == {"percentile": 90.0, "ms": 250.0}
        assert arm["bound"]["name"] == "delay", arm["bound"]  # 1 in flight x 20 ms a trip
        assert arm["connection_model"]["kept_alive"] is False  # gunicorn's sync worker closes
        held = [s for s in arm["steps"] if s["held"]]
        assert all(s["percentile_ms"] <= 250 and not s["failed"] for s in held)
    [floor] = results["noise_floor"]
    assert (floor["app"], floor["baseline"]) == ("flask#2", "flask#1")
    low, high = floor["ci95"]
    assert low <= 1 <= high, floor
    report = path.with_suffix(".md").read_text()
    assert (
        "## Capacity at p90 <= 250 ms" in report and "A/A noise floor (flask#2 / flask#1" in report
    )
    assert "no measurable difference" in report
    assert "Each capacity then confirmed: offered again for 3 s" in report
