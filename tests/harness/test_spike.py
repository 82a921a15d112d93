"""A spike and the recovery (bench/modes/spike.py): the mode against a real
server whose recovery is known, over HTTP (its refusal without --slo:
tests/harness/test_refusals.py).

The server, made here, answers one request after the other from a queue, each
SERVICE seconds after the one before: it serves RATE requests/s whatever is
offered. Offered half that for 1 s, twice that for 1 s, then half again, its
queue ends the spike RATE requests long (the excess: 2 x RATE - RATE, for 1 s)
and drains at RATE - RATE / 2 a second: in 2 s. A request due t seconds after
the spike's end waits (RATE - RATE / 2 x t) / RATE = 1 - t / 2 s, within the
250 ms objective from t = 1.5 s: its second 1 misses it, its second 2 keeps
it, so it recovers in 2 s. (250 ms, and 100 requests a second after the
spike: room for the shared machine's stalls, which a 100 ms p99 over 50
requests a second would count against the server.) Bounded (it refuses a request that would wait
more than BUDGET, 503 at once, as the apps' admission does), its queue never
grows past BUDGET and it recovers at once, within the second after the
spike. Wide margins: no speed is asserted, only that the instrument finds
what the queue's arithmetic imposes."""

import asyncio
import time

import pytest

from bench.modes import spike
from bench.options import Objective, Phase
from bench.plan import plan
from bench.progress import Progress
from bench.records import AppRun, Capacity, Results, from_json, to_json
from bench.report.charts import draw_spike
from bench.rotation import Context, Stage
from bench.routes import ROUTES
from bench.sut.targets import Target
from tests.helpers import bench_options
from tests.toy_http import ENVIRONMENT, REFUSED, Connection, NoDatabase, ThreadedServer

RATE = 200.0  # requests/s the server answers
SERVICE = 1 / RATE
BUDGET = 0.050  # the bounded server's: the longest a request may wait
P99_250 = Objective(99.0, 250.0)
PHASES = (Phase(1, 0.5), Phase(1, 2.0), Phase(3, 0.5))
PHYSICS_S = 2.0  # the unbounded queue's recovery (above)


class Queued(Connection):
    """Each request queued behind the others, answered SERVICE after the one
    before; bounded, refused at once where it would wait past the budget."""

    def request(self):
        server, now = self.server, time.perf_counter()
        start = max(now, server.free_at)
        if server.budget is not None and start - now > server.budget:
            server.refused += 1
            return self.write(*REFUSED)
        server.free_at = start + SERVICE
        asyncio.get_running_loop().call_later(server.free_at - now, self.write, b"200 OK")


class QueueServer(ThreadedServer):
    CONNECTION = Queued
    BACKLOG = 1024

    def __init__(self, budget=None):
        super().__init__()
        self.budget, self.free_at, self.refused = budget, 0.0, 0


def measured(url, tmp_path, repeat):
    """The mode's record of the server at url, its capacity given as the physics."""
    options = bench_options(
        apps=["queue"], routes=["film"], connections=[400], duration=1, warmup=0,
        repeat=repeat, pin=None, slo=P99_250, spike=PHASES,
    )  # fmt: skip
    target = Target("queue", "tuned", url=url, record=AppRun("queue", "tuned", "measured"))
    found = {"capacity": [Capacity("queue", "tuned", "film", 400, {"value": RATE})]}
    with open(tmp_path / "run.log", "w") as log:
        context = Context(NoDatabase(), options.runs, log)
        progress = Progress(spike.steps(options, 1))
        stage = Stage(options, [ROUTES["film"]], context, progress, 0.0, None, [target])
        [record] = spike.measure_apps(stage, found)["spike"]
    return record


def results_of(record, tmp_path):
    results = Results("./benchmark.sh queue --slo 250ms --spike 0.5x:1s,2x:1s,0.5x:3s",
                      ENVIRONMENT, {}, [AppRun("queue", "tuned", "measured")], spike=[record],
                      objective=P99_250.as_dict())  # fmt: skip
    return from_json(to_json(results))


@pytest.mark.slow
def test_a_queue_recovers_in_the_time_it_takes_to_drain(tmp_path):
    with QueueServer() as server:
        found = measured(server.url, tmp_path, repeat=2)
    assert server.refused == 0
    assert [phase["rate"] for phase in found.phases] == [100, 400, 100]
    assert (found.spike, found.spike_end_s, found.runs) == (1, 2, 2)
    recovery = found.recovery_s
    assert all(1.0 <= run <= 3.0 for run in recovery["runs"]), recovery  # the physics: 2 s
    low, high = recovery["ci95"]
    assert low <= recovery["value"] <= high
    # In the spike it answers in time only those that waited under 250 ms
    # (in its first quarter second), after it half of those due (t >= 1.5 s).
    before, during, after = (estimate["value"] for estimate in found.goodput_rps)
    assert before >= 0.9 * RATE / 2 and during <= 0.5 * RATE and after <= 0.9 * RATE / 2
    assert found.refused_rps == [0, 0, 0] and found.errors_rps == [0, 0, 0]
    late = [row["p99_ms"] for row in found.per_second]
    assert max(late[2]) > 500 and max(late[-1]) < 250  # the queue's wait, then none
    results = results_of(found, tmp_path)
    report = "\n".join(spike.section(results))
    assert "## A spike and the recovery (p99 <= 250 ms)" in report
    assert "Recovery: " in report and "| spike, 1 s | 2 | 400 |" in report
    assert draw_spike(results, tmp_path / "spike.png").stat().st_size > 10_000


@pytest.mark.slow
def test_a_queue_bounded_by_refusals_recovers_at_once(tmp_path):
    with QueueServer(budget=BUDGET) as server:
        found = measured(server.url, tmp_path, repeat=1)
    assert server.refused > 0
    # At once, to the second: the first requests after the spike find its
    # queue BUDGET long, and a few of them may still be refused.
    assert found.recovery_s["runs"][0] in (0.0, 1.0) and found.recovery_s["ci95"] is None
    assert found.refused_rps[1] >= 0.5 * RATE  # the excess, refused at once
    assert found.goodput_rps[1]["value"] >= 0.8 * RATE  # and the capacity served in time
    assert "1 run: no interval" in "\n".join(spike.section(results_of(found, tmp_path)))


def row(second, due, good):
    return {"second": second, "due": due, "good": good}


@pytest.mark.parametrize(
    ("goods", "recovered"),
    [
        ([100, 100, 100], 0.0),  # the spike's end: every second kept it
        ([0, 50, 99, 100], 2.0),  # 99 of 100 within: a p99 that holds
        ([0, 100, 98, 100], 3.0),  # kept once, then missed: it counts from the last miss
        ([100, 100, 0], None),  # its last second missed: not recovered
    ],
)
def test_the_recovery_is_the_time_from_which_every_second_keeps_the_objective(goods, recovered):
    rows = [row(0, 100, 0), row(1, 100, 0)] + [
        row(2 + index, 100, good) for index, good in enumerate(goods)
    ]
    assert spike.recovery(rows, 2, P99_250) == recovered


def test_the_recovery_s_interval_runs_over_the_runs_and_says_not_recovered():
    assert spike.recovery_estimate([2.0], 4) == {"value": 2.0, "ci95": None, "runs": [2.0]}
    found = spike.recovery_estimate([1.0, 2.0, 3.0, None, 2.0], 4)
    assert found["value"] == 2.0 and found["ci95"][0] >= 1.0 and found["ci95"][1] is None
    assert spike.recovery_estimate([None, None], 4)["value"] is None


def test_the_plan_counts_a_schedule_per_app_and_round():
    options = bench_options(slo=P99_250, spike=PHASES, routes=["film"], repeat=3)
    planned = plan(options, 2)  # two apps, one route, one connection count
    assert planned["spike"] == (2 * 3, 5 + options.runs.warmup + 1)
    assert "spike" not in plan(bench_options(slo=P99_250), 2)


def test_results_written_before_the_spike_still_load():
    old = to_json(Results("./benchmark.sh flask", ENVIRONMENT, {}, []))
    assert from_json(old.replace('  "spike": [],\n', "")).spike == []
