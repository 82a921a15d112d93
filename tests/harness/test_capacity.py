"""The capacity search (bench/modes/capacity/) and the intervals
(bench/intervals.py), in process: the search driven by a model server of
known capacity, the verdicts from real HdrHistograms, the bootstrap on
made-up rounds, --tune's choice over Trials, the A/A arms of the lineup. The
search against real servers is tests/harness/test_capacity_run.py."""

import math
import random

import pytest
from hdrh.histogram import HdrHistogram

from bench import intervals
from bench.modes import tune
from bench.modes.capacity.bounds import bound
from bench.modes.capacity.records import confirmation_record, step_record
from bench.modes.capacity.search import (
    CONFIRM_STEPS,
    CONFIRM_TRIES,
    MAX_STEPS,
    TOLERANCE,
    Search,
    next_confirmation,
)
from bench.modes.capacity.verdict import PACE, holds, reduced
from bench.options import SUT, Objective
from bench.parsers import slo
from bench.records import AppRun, Capacity, Peak, Results, Summary, Trial
from bench.report import select
from bench.report.capacity import floor_for
from bench.sut.lineup import arms, lineup

P99_100 = Objective(99.0, 100.0)


def report(latencies_ms, failed=0, late_ms=1.0, opened=1, pace=1.0):
    """An open-loop report as the generator prints it, for these latencies,
    its second half's answers `pace` of the requests due in it."""
    histogram = HdrHistogram(1, 3_600_000_000, 3)
    for ms in latencies_ms:
        histogram.record_value(max(1, round(ms * 1000)))
    answered = len(latencies_ms)
    return {
        "sent": answered + failed,
        "ok": answered,
        "non_2xx": 0,
        "histogram": histogram.encode().decode("ascii"),
        "send_lag_ms": {"p99": late_ms},
        "connections_opened": opened,
        "pace": {"answered": round(answered / 2 * pace), "due": answered // 2},
    }


def model_server(capacity_rps, noise=0.0, seed=1):
    """rate -> a report: 10 ms answers below capacity_rps (times a noise
    factor per call), a queue that grows fast beyond it: p99 over 100 ms
    within 2 % above it."""
    draw = random.Random(seed)

    def answer(rate):
        limit = capacity_rps * (1 + draw.uniform(-noise, noise))
        if rate <= limit:
            return report([10.0] * 200)
        backlog = [10.0 + 5000 * (rate - limit) / limit * i / 200 for i in range(200)]
        return report(backlog, pace=limit / rate)

    return answer


def searched(server, peak, rounds=1, objective=P99_100):
    search = Search(None, None, 20, peak, objective, rounds, "tuned")
    while search.rate is not None:
        rate = search.rate
        for repeat in range(rounds):
            search.add(repeat, server(rate))
    return search


@pytest.mark.parametrize("peak", [120, 300, 1000, 5000])
def test_the_search_converges_on_a_known_capacity_from_any_peak(peak):
    search = searched(model_server(400), peak)
    found = search.capacity(range(1))
    held, broke = search.bracket(range(1))
    assert 400 * 0.85 <= found <= 400 * 1.02 < broke, search.order
    assert broke <= held * (1 + TOLERANCE) + 1 or len(search.order) == MAX_STEPS
    assert len(search.order) <= MAX_STEPS


def confirmed(search, server):
    """The search's confirmation, each run's report from server(rate)."""
    search.confirm()
    while search.confirming is not None:
        search.confirm(server(search.confirming))
    return search


def test_a_capacity_that_holds_when_offered_again_is_confirmed_at_once():
    search = confirmed(searched(model_server(400), 1000), model_server(400))
    found = confirmation_record(search, 10)
    assert found["held"] and found["rate"] == search.searched_rps == search.capacity(range(1))
    assert [run["rate"] for run in found["runs"]] == [found["rate"]]
    assert found["seconds"] == CONFIRM_STEPS * 10


def test_a_capacity_the_noise_flattered_steps_down_until_a_confirmation_holds():
    """The search's short steps held up to 460 (its noise); a longer run holds
    only up to 400: the capacity steps down by the resolution, below 400."""
    search = searched(model_server(460), 460)
    first = search.capacity(range(1))
    assert first > 400
    confirmed(search, model_server(400))
    found = confirmation_record(search, 10)
    rates = [run["rate"] for run in found["runs"]]
    assert rates[0] == first and found["held"] and rates[-1] == found["rate"] <= 400
    assert all(not run["held"] for run in found["runs"][:-1])
    # each step down at most the resolution, or to a rate the search held in between
    for higher, lower in zip(rates, rates[1:], strict=False):
        assert lower >= math.floor(higher / (1 + TOLERANCE))
    assert search.capacity(range(1)) == found["rate"] >= 400 / (1 + TOLERANCE) ** 2
    held, broke = search.bracket(range(1))
    assert (held, broke) == (found["rate"], rates[-2])  # the lowest confirmation that broke


def test_the_step_down_is_bounded_and_an_unconfirmed_capacity_says_so():
    search = confirmed(searched(model_server(400), 400), lambda rate: report([500.0] * 100))
    found = confirmation_record(search, 10)
    assert not found["held"] and found["rate"] is None
    assert len(found["runs"]) == CONFIRM_TRIES


@pytest.mark.parametrize(
    ("value", "broke", "expected"),
    [
        (500.0, [], 500.0),  # the search's capacity first
        (0.0, [], None),  # no rate held: nothing to confirm
        (400.0, [500.0], 454.0),  # below a broken rate by the resolution
        (470.0, [500.0], 470.0),  # or to a rate the search held within it
        (0.0, [1.0], None),  # nothing left below 1 req/s
    ],
)
def test_the_next_confirmation(value, broke, expected):
    slow = reduced(report([500.0] * 100), P99_100)
    tried = dict.fromkeys(broke, slow)
    assert next_confirmation(value, tried, P99_100) == expected


def test_a_confirmation_the_generator_was_late_for_is_offered_once_more():
    search = searched(model_server(400), 400)
    search.confirm()
    rate = search.confirming
    search.confirm(report([10.0] * 100, late_ms=80.0))
    assert search.confirming == rate and search.confirm_retried == {rate: 80.0}
    search.confirm(report([10.0] * 100))
    assert search.confirming is None and confirmation_record(search, 1)["held"]


def test_a_capacity_no_rate_kept_is_zero():
    search = searched(lambda rate: report([500.0] * 100), 50)
    assert search.capacity(range(1)) == 0.0 and min(search.order) >= 1


def test_the_percentile_is_that_of_the_merged_histograms():
    one_slow = [10.0] * 98 + [500.0] * 2  # p99 500 ms alone
    all_fast = [10.0] * 100
    runs = [reduced(report(one_slow), P99_100)]
    assert not holds(runs, P99_100)
    runs.append(reduced(report(all_fast), P99_100))
    assert holds(runs, P99_100)  # 2 of 200 beyond: the merged p99 holds
    runs.append(reduced(report(all_fast, failed=1), P99_100))
    assert holds(runs, P99_100)  # 2 late and 1 failed of 301: 1 % missed it
    runs.append(reduced(report(all_fast, failed=2), P99_100))
    assert not holds(runs, P99_100)  # 2 late and 3 failed of 403: a failure is a miss
    p95 = Objective(95.0, 100.0)
    assert holds([reduced(report([10.0] * 95 + [500.0] * 5), p95)], p95)


def test_a_step_where_the_generator_was_late_is_invalid_and_broken():
    late = reduced(report([10.0] * 100, late_ms=60.0), P99_100)
    assert not late.valid and not holds([late], P99_100)
    assert reduced(report([10.0] * 100, late_ms=40.0), P99_100).valid


def test_a_step_whose_answers_fell_behind_its_schedule_breaks_within_its_objective():
    """At 1.3x what the app answers, a short step's queue has not yet pushed
    the p99 past the objective: the pace breaks it."""
    behind = reduced(report([10.0] * 200, pace=0.77), P99_100)
    assert not holds([behind], P99_100)
    kept = [reduced(report([10.0] * 200, pace=0.92), P99_100)] * 3
    assert holds(kept, P99_100)
    # A few requests' edge effects: within a request per run of the schedule.
    small = reduced(report([10.0] * 10, pace=0.8), P99_100)
    assert holds([small], P99_100)
    search = searched(lambda rate: report([10.0] * 200, pace=min(1.0, 400 / rate)), 1000)
    assert 400 * 0.85 <= search.capacity(range(1)) <= 400 * (1 + PACE)
    step = step_record(search, 1000.0)
    assert "fell behind: 40%" in step["behind"] and step["pace"] == pytest.approx(0.4)
    assert step["held"] is False


def test_the_interval_holds_the_capacity_and_the_noise_between_rounds():
    search = searched(model_server(400, noise=0.15, seed=3), 400, rounds=5)
    value = search.capacity(range(5))
    low, high = intervals.bootstrap_range(5, search.bracket)
    assert low <= value <= high
    assert 400 * 0.7 <= low and high <= 400 * 1.4


def test_one_round_has_no_interval():
    assert intervals.bootstrap(1, lambda drawn: 1.0) is None
    assert intervals.bootstrap_range(1, lambda drawn: (1.0, 2.0)) is None
    assert intervals.words({"value": 1.3, "ci95": None}) == "1.30x (1 round: no interval)"


def test_the_bootstrap_interval_of_a_ratio_covers_the_truth():
    draw = random.Random(5)
    base = [100 * draw.gauss(1, 0.05) for _ in range(8)]
    other = [150 * draw.gauss(1, 0.05) for _ in range(8)]

    def mean(values):
        return lambda drawn: sum(values[i] for i in drawn) / len(drawn)

    found = intervals.paired_ratio(8, mean(other), mean(base))
    low, high = found["ci95"]
    assert low < 1.5 < high and high - low < 0.3
    assert intervals.measurable(found)
    assert intervals.words(found).startswith(f"{found['value']:.2f}x (")


def test_a_difference_inside_its_interval_or_the_floor_is_no_measurable_difference():
    inside = {"value": 1.04, "ci95": [0.97, 1.11]}
    assert intervals.words(inside).startswith(intervals.NO_DIFFERENCE)
    outside = {"value": 1.06, "ci95": [1.02, 1.10]}
    assert intervals.measurable(outside)
    floor = {"value": 1.0, "ci95": [0.9, 1.08]}  # the A/A arms differ by up to 10 %
    assert not intervals.measurable(outside, floor)
    assert intervals.words(outside, floor) == "no measurable difference (1.06x, 1.02-1.10)"


def trial(deployment, capacities, p99=50.0):
    rps = {route: 1000.0 for route in capacities}
    score = tune.geometric_mean(capacities.values())
    p99s = dict.fromkeys(capacities, p99)
    return Trial("flask", deployment, 100, 0.0, rps, p99s, score, capacity_rps=capacities)


def test_tune_never_chooses_a_configuration_that_broke_the_objective():
    trials = [
        trial("sync", {"film": 900.0, "review": 800.0}),
        trial("gevent", {"film": 2400.0, "review": 0.0}, p99=852.0),  # broke on review
        trial("threads4", {"film": 1000.0, "review": 800.0}),
    ]
    tune.choose(trials, P99_100)
    [chosen] = [t for t in trials if t.chosen]
    assert chosen.deployment == "threads4"
    assert "kept p99 <= 100 ms at no rate offered on POST /reviews/" in trials[1].rejected
    assert max(trials, key=lambda t: t.capacity_rps["film"]) is trials[1]  # most on film, not best


def test_tune_chooses_none_when_every_configuration_broke_it():
    trials = [trial("sync", {"film": 0.0}), trial("gevent", {"film": 0.0})]
    tune.choose(trials, P99_100)
    assert not any(t.chosen for t in trials) and all(t.rejected for t in trials)


def test_an_app_named_twice_is_two_arms_of_the_a_a_control():
    assert arms(["flask", "quart", "flask"]) == [("flask", 1), ("quart", 0), ("flask", 2)]
    slots = lineup(SUT(apps=["flask", "flask"], deployments=["tuned"]), 20)
    assert [(s.app, s.name, s.label) for s in slots] == [
        ("flask", "flask#1", "flask#1 (tuned)"),
        ("flask", "flask#2", "flask#2 (tuned)"),
    ]


@pytest.mark.parametrize(
    ("text", "objective"),
    [
        ("100ms", Objective(99.0, 100.0)),
        ("p95:50ms", Objective(95.0, 50.0)),
        ("p99.9:1s", Objective(99.9, 1000.0)),
        ("2.5ms", Objective(99.0, 2.5)),
    ],
)
def test_slo_values(text, objective):
    assert slo(text) == objective


def test_with_capacities_each_app_at_its_best_is_the_most_capacity_not_the_most_req_s():
    def peak(deployment, rps):
        latency = dict.fromkeys(("mean", "p50", "p90", "p99", "max"), 1.0)
        summary = Summary(1, rps, rps, rps, latency, 1, 0, 0)
        return Peak("flask", deployment, 100, "film", summary)

    def found(deployment, rps):
        return Capacity("flask", deployment, "film", 100, {"value": rps, "ci95": None})

    results = Results("x", {}, {}, [], measurements=[peak("gevent", 2427.0), peak("sync", 2123.0)])
    assert select.best(results, "film")[("flask", 0.0, 100)].deployment == "gevent"
    results.capacity = [found("gevent", 300.0), found("sync", 1500.0)]
    assert select.best(results, "film")[("flask", 0.0, 100)].deployment == "sync"


def test_a_step_where_the_generator_was_late_is_offered_once_more():
    search = Search(None, None, 20, 100, P99_100, 1, "tuned")
    search.add(0, report([10.0] * 100, late_ms=80.0))
    assert search.rate == 100 and search.retried == {100.0: 80.0}
    search.add(0, report([10.0] * 100))  # on time, and within the objective
    assert search.verdicts([0]) == {100.0: True} and search.rate == 150
    search.add(0, report([10.0] * 100, late_ms=80.0))
    search.add(0, report([10.0] * 100, late_ms=80.0))  # late again: broken
    assert search.verdicts([0])[150.0] is False and search.rate == 125


class Target:
    """What bound() reads of a target: its database delay and what ran."""

    def __init__(self, delay_s, in_flight, budget=20):
        self.db_delay = delay_s
        self.record = AppRun(
            "flask", "tuned", "measured", in_flight=in_flight, db_connections=budget
        )


def search_of(target, peak, service_ms, round_trips):
    search = Search(target, None, 20, peak, P99_100, 1, "tuned")
    run = dict(report([service_ms] * 100), round_trips_per_request=round_trips)
    run["service_ms"] = {"mean": service_ms}
    search.add(0, run)
    return search


@pytest.mark.parametrize(
    ("delay_s", "in_flight", "peak", "service_ms", "binds"),
    [
        (0.0, 5, 2000, 2.0, "CPU"),  # direct: nothing waits long, the cores ran out
        (0.020, 1, 36, 27.0, "delay"),  # one sync worker waiting 20 of its 27 ms
        (0.020, 5, 240, 21.0, "delay"),  # five: 5 / 20 ms = 250, near the peak
        (0.020, 10, 480, 22.0, "connections"),  # threads: the budget of 10 / 20 ms = 500
        (0.001, 5, 1500, 3.0, "CPU"),  # 1 ms away: 5,000 in flight allow, 1,500 the CPU gave
    ],
)
def test_the_bound_that_binds_is_named_from_what_was_measured(
    delay_s, in_flight, peak, service_ms, binds
):
    search = search_of(Target(delay_s, in_flight, budget=max(in_flight, 10)), peak, service_ms, 1.0)
    found = bound(search, search.capacity([0]))
    assert found["name"] == binds, found


def test_each_deployment_is_judged_by_its_own_a_a_floor():
    """--proxy both: two floors at one place, direct and behind nginx; a ratio
    behind nginx is read against nginx's, not the first found."""
    place = {"db_delay_ms": 0.0, "route": "film", "connections": 100}
    direct = {**place, "deployment": "tuned", "value": 1.0, "ci95": [0.95, 1.05]}
    nginx = {**place, "deployment": "tuned+nginx", "value": 1.0, "ci95": [0.9, 1.9]}
    floors = [direct, nginx]
    assert floor_for(floors, {**place, "deployment": "tuned+nginx"}) is nginx
    assert floor_for(floors, {**place, "deployment": "tuned"}) is direct
    assert floor_for([direct], {**place, "deployment": "best"}) is direct  # --tune's arms
    assert floor_for(floors, {**place, "route": "review", "deployment": "tuned"}) is None
