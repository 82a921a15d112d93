"""Goodput past capacity (bench/modes/overload.py): the mode against a real
server of known capacity, over HTTP (its refusal without --slo: tests/harness/test_refusals.py).

The server, made here, admits at most LIMIT requests at once, answers each
after DELAY, and refuses the others at once: 503 with Retry-After, as an app
with an admission limit does. Its capacity is LIMIT / DELAY (80 req/s) on
any machine that can run it; offered twice that, its goodput is that
capacity and the rest are refusals. Wide margins: no speed is asserted,
only that the instrument counts what the server's limit imposes."""

import asyncio
import dataclasses

import pytest

from bench.modes import overload
from bench.modes.capacity.search import CONFIRM_STEPS, CONFIRM_TRIES
from bench.options import Objective
from bench.plan import plan
from bench.progress import Progress
from bench.records import AppRun, Capacity, Overload, Results
from bench.report.charts import draw_overload
from bench.rotation import Context, Stage
from bench.routes import ROUTES
from bench.sut.targets import Target
from tests.helpers import bench_options
from tests.toy_http import ENVIRONMENT, REFUSED, Connection, NoDatabase, ThreadedServer

LIMIT, DELAY = 4, 0.050
PHYSICS = LIMIT / DELAY  # requests/s it can answer
P99_100 = Objective(99.0, 100.0)


class Admitting(Connection):
    """Each request admitted, or refused at once past LIMIT in flight."""

    def request(self):
        asyncio.get_running_loop().create_task(self.answer())

    async def answer(self):
        server = self.server
        if server.in_flight >= LIMIT:
            server.refused += 1
            return self.write(*REFUSED)
        server.in_flight += 1
        try:
            await asyncio.sleep(DELAY)
        finally:
            server.in_flight -= 1
        self.write(b"200 OK")


class AdmittingServer(ThreadedServer):
    CONNECTION = Admitting

    def __init__(self):
        super().__init__()
        self.in_flight = self.refused = 0


def measured(url, tmp_path, multiples):
    """The mode's records of the server at url, its capacity given as the physics."""
    options = bench_options(
        apps=["admitting"], routes=["film"], connections=[50], duration=1, warmup=0,
        repeat=2, pin=None, slo=P99_100, overload=multiples,
    )  # fmt: skip
    record = AppRun("admitting", "tuned", "measured")
    target = Target("admitting", "tuned", url=url, record=record)
    found = {"capacity": [Capacity("admitting", "tuned", "film", 50, {"value": PHYSICS})]}
    with open(tmp_path / "run.log", "w") as log:
        context = Context(NoDatabase(), options.runs, log)
        progress = Progress(overload.steps(options, 1))
        stage = Stage(options, [ROUTES["film"]], context, progress, 0.0, None, [target])
        return overload.measure_apps(stage, found)["overload"]


@pytest.mark.slow
def test_past_its_capacity_a_server_that_refuses_keeps_its_goodput(tmp_path):
    with AdmittingServer() as server:
        found = {o.multiple: o for o in measured(server.url, tmp_path, (0.5, 2.0))}
    assert server.refused > 0
    half, double = found[0.5], found[2.0]
    assert (half.offered_rps, double.offered_rps) == (PHYSICS / 2, PHYSICS * 2)
    assert half.goodput_rps["value"] >= 0.9 * half.offered_rps, half
    assert half.refused_rps <= 0.05 * half.offered_rps
    # Twice the capacity: the capacity answered in time, the rest refused at once.
    goodput = double.goodput_rps["value"]
    assert 0.6 * PHYSICS <= goodput <= 1.1 * PHYSICS, double
    low, high = double.goodput_rps["ci95"]
    assert low <= goodput <= high
    assert double.refused_rps >= 0.5 * PHYSICS, double
    assert double.retry_after == 1.0
    assert double.refusal_ms["p50"] < DELAY * 1000 <= double.refusal_ms["p99"] + DELAY * 1000
    assert sum(double.errors_rps.values()) == 0, double.errors_rps
    assert double.kept_schedule and double.runs == 2 and double.seconds == 1
    results = Results("./benchmark.sh admitting --slo 100ms --overload 0.5,2", ENVIRONMENT, {},
                      [AppRun("admitting", "tuned", "measured")], overload=list(found.values()),
                      objective=P99_100.as_dict())  # fmt: skip
    report = "\n".join(overload.section(results))
    assert "## Goodput past capacity (p99 <= 100 ms)" in report
    assert "| 2 | 160 |" in report and "(Retry-After: 100%)" in report
    assert draw_overload(results, tmp_path / "overload.png").stat().st_size > 10_000


def test_the_plan_counts_the_confirmations_and_every_multiple():
    options = bench_options(slo=P99_100, overload=(0.5, 2.0), routes=["film"], repeat=3)
    planned = plan(options, 2)  # two apps, one route, one connection count
    assert planned["overload"][0] == 2 * 2 * 3  # apps x multiples x rounds
    confirm = CONFIRM_STEPS * options.slo_step + options.runs.warmup + 1
    assert planned["confirm"] == (2 * CONFIRM_TRIES, confirm)
    assert "overload" not in plan(bench_options(slo=P99_100), 2)


def test_on_the_ratings_route_the_report_says_the_most_ratings_asked_at_once():
    """What an app asked of its sources past capacity: the most ratings in
    flight at once over its runs (each run's worst, read around it)."""
    reports = [{"upstream": {"most_in_flight": 12}}, {"upstream": {"most_in_flight": 30}}]
    assert overload.sources_in_flight(reports) == 30
    assert overload.sources_in_flight([{"ok": 1}]) is None  # not the ratings route
    found = Overload(
        "quart", "tuned", "ratings", 50, 2.0, 100.0, 200.0, 5, 2, {"value": 90.0, "ci95": None},
        late_rps=1.0, refused_rps=100.0, errors_rps={}, sources_in_flight=30, fan_out=3,
        upstream_delay="50ms",
    )  # fmt: skip
    results = Results("./benchmark.sh quart --routes ratings --fan-out 3", ENVIRONMENT, {},
                      [AppRun("quart", "tuned", "measured")], overload=[found],
                      objective=P99_100.as_dict())  # fmt: skip
    report = "\n".join(overload.section(results))
    assert "| ratings asked at once, most |" in report
    assert report.count("| 30 |") == 1
    film = dataclasses.replace(found, route="film", fan_out=None, upstream_delay=None)
    assert "ratings asked at once" not in "\n".join(overload.section(
        dataclasses.replace(results, overload=[film])))  # fmt: skip
