"""A spike and the recovery (--spike, with --slo): once each app's capacity
is found and confirmed at this database delay (the capacity mode's records,
read as --overload reads them), the open loop offers each app a step load of
multiples of its own capacity, phase after phase (by default 0.5x for 20 s,
3x for 10 s, 0.5x for 30 s), per route and connection count, --repeat runs
in rotation (after the --warmup, which offers the schedule's first seconds).

Per second of the schedule, by each request's due time: the p99 of the
answers, the goodput (2xx within the objective), the 503 refusals, the other
errors. A second keeps the objective when its percentile, a request not
answered 2xx in time counted as beyond it, is within it: at most (100 -
percentile) % of the requests due in it were not good (bench/modes/capacity/verdict.py's holds()
rule, per second). The recovery is the time after the spike's end from
which every second kept it, to the schedule's end; a run whose last second
did not has not recovered. A server that refuses the excess at once keeps
its queue short and recovers in a second; one whose queue grew through the
spike answers late until it has drained: the excess over what it can serve,
divided by how much faster it serves than the base rate arrives."""

import dataclasses
import statistics

from bench import intervals
from bench.load.measure import measure_once
from bench.modes import open_loop, overload
from bench.modes.capacity import verdict
from bench.modes.mode import Mode
from bench.options import Phase
from bench.parsers import spike_phases
from bench.records import Spike
from bench.report.spike import section  # the mode's section: a view of its records
from bench.rotation import Step, measure_in_rotation

# --spike alone: half the capacity for 20 s, three times it for 10 s, then
# half again for 30 s, time for a queue the spike left to drain (issue 42).
DEFAULT_SPIKE = (Phase(20, 0.5), Phase(10, 3.0), Phase(30, 0.5))


def refused(options):
    """Why its option cannot run with the others, or None."""
    if options.spike and not options.slo:
        return "--spike offers multiples of each app's capacity: give --slo too"
    return None


def schedule_seconds(options):
    return sum(phase.seconds for phase in options.spike)


def steps(options, apps):
    """Its steps per database delay, for Progress: one schedule per app,
    route and connection count, in every round."""
    if not options.spike:
        return {}
    runs = options.runs
    count = apps * len(options.routes) * len(runs.connections) * runs.repeat
    return {"spike": (count, schedule_seconds(options) + runs.warmup + 1)}


@dataclasses.dataclass(frozen=True)
class Schedule(Step):
    """A step that offers phases, [(seconds, rate)], its rate the first's."""

    phases: tuple = ()

    def label(self, target):
        rates = ", ".join(f"{rate:g}/s for {seconds:g} s" for seconds, rate in self.phases)
        return f"{target.label} {self.route.label}: {rates}, run {self.repeat + 1}/{self.repeats}"


def rates(phases, capacity_rps):
    """[(seconds, rate)]: each phase's multiple of the capacity, as --overload offers it."""
    return tuple(
        (phase.seconds, overload.rate_at(phase.multiple, capacity_rps)) for phase in phases
    )


def measure_apps(stage, gathered):
    """The Spikes of every app whose capacity was found here."""
    options = stage.options
    if not options.spike:
        return {}
    offers = {}  # (target label, route, connections) -> (its Capacity, phases)
    for target in stage.measured:
        for route in stage.routes:
            for connections in options.runs.connections:
                searched = overload.capacity_of(
                    gathered.get("capacity", []), target, route, connections
                )
                if searched:
                    phases = rates(options.spike, searched.capacity_rps["value"])
                    offers[(target.label, route.key, connections)] = (searched, phases)
    reports = {key: [] for key in offers}
    objective_ms = options.slo.ms

    def measure(target, step, context):
        seconds = sum(length for length, _ in step.phases)
        runs = dataclasses.replace(context.runs, connections=[step.connections], duration=seconds)
        generator = open_loop.generator(
            target, step.route, step.rate, runs, step.phases, objective_ms
        )
        report = measure_once(target, step.route, context.db, runs, context.log, generator)
        reports[(target.label, step.route.key, step.connections)].append(report)
        return report

    measure_in_rotation(stage, rounds(stage, offers), measure, open_loop.describe)
    kept = {target.label: target for target in stage.measured if target.measurable}
    return {
        "spike": [
            record(kept[key[0]], key, offers[key][0], runs, options)
            for key, runs in reports.items()
            if runs and key[0] in kept
        ]
    }


def rounds(stage, offers):
    """Per route and connection count, every round: each app its schedule
    (None where it has none)."""
    runs = stage.options.runs
    planned = []
    for route in stage.routes:
        for connections in runs.connections:
            for repeat in range(runs.repeat):

                def step(target, route=route, connections=connections, repeat=repeat):
                    offer = offers.get((target.label, route.key, connections))
                    if offer is None:
                        return None
                    phases = offer[1]
                    return Schedule(
                        "spike", route, connections, phases[0][1], repeat, runs.repeat, phases
                    )

                planned.append(step)
    return planned


def keeps(row, objective):
    """Whether a second kept the objective: at most (100 - percentile) % of
    the requests due in it not answered 2xx within it (a second with none due keeps it)."""
    allowed = int(row["due"] * (100 - objective.percentile) / 100 + 1e-9)
    return row["due"] - row["good"] <= allowed


def recovery(rows, spike_end, objective):
    """Seconds after spike_end from which every row (a second of one run)
    kept the objective to the end; None if the last did not."""
    after = [keeps(row, objective) for row in rows if row["second"] >= spike_end]
    if not after or not after[-1]:
        return None
    kept_from = len(after)
    while kept_from and after[kept_from - 1]:
        kept_from -= 1
    return float(kept_from)


def recovery_estimate(found, after):
    """{"value", "ci95", "runs"}: the median run's recovery (the higher middle
    one), its 95 % interval over the runs; None for not recovered (counted as
    longer than the `after` seconds the schedule had left)."""
    never = after + 1.0

    def median(drawn):
        return statistics.median_high([never if found[i] is None else found[i] for i in drawn])

    def shown(value):
        return None if value is None or value > after else value

    ci95 = intervals.bootstrap(len(found), median)
    return {
        "value": shown(median(range(len(found)))),
        "ci95": ci95 and [shown(ci95[0]), shown(ci95[1])],
        "runs": found,
    }


def per_phase(rows_by_run, phases, *keys):
    """Per phase, per run: the rows' `keys` added up, per second of the phase."""
    found, begin = [], 0
    for phase in phases:
        end = begin + phase["seconds"]
        here = [[row for row in rows if begin <= row["second"] < end] for rows in rows_by_run]
        found.append(
            [sum(row[k] for row in rows for k in keys) / phase["seconds"] for rows in here]
        )
        begin = end
    return found


def seconds_record(rows_by_run, phases):
    """Per second of the schedule: the rate offered, and each run's figures."""
    offered = [phase["rate"] for phase in phases for _ in range(phase["seconds"])]
    return [
        {
            "second": second,
            "rate": rate,
            **{key: [rows[second][key] for rows in rows_by_run] for key in SECOND_KEYS},
        }
        for second, rate in enumerate(offered)
    ]


SECOND_KEYS = ("due", "good", "refused", "errors", "other", "p99_ms")


def rows_of(report):
    """The generator's per-second rows, with `other`: answers of another non-2xx status."""
    return [
        {**row, "other": row["due"] - row["ok"] - row["refused"] - row["errors"]}
        for row in report["per_second"]
    ]


def record(target, key, searched, reports, options):
    """One app's runs (reports) of the schedule as its Spike record; key:
    (its label, route, connections); searched: its Capacity record."""
    _, route, connections = key
    offered = rates(options.spike, searched.capacity_rps["value"])
    phases = [
        {"seconds": phase.seconds, "multiple": phase.multiple, "rate": rate}
        for phase, (_, rate) in zip(options.spike, offered, strict=True)
    ]
    spike = max(range(len(phases)), key=lambda index: phases[index]["multiple"])
    spike_end = sum(phase["seconds"] for phase in phases[: spike + 1])
    after = sum(phase["seconds"] for phase in phases[spike + 1 :])
    rows_by_run = [rows_of(report) for report in reports]
    found = [recovery(rows, spike_end, options.slo) for rows in rows_by_run]
    goodput = per_phase(rows_by_run, phases, "good")
    late = max(verdict.late_ms(r) for r in reports)
    return Spike(
        app=target.app,
        deployment=searched.deployment,  # "best" for --tune's, as the capacity's
        route=route,
        connections=connections,
        capacity_rps=searched.capacity_rps["value"],
        phases=phases,
        spike=spike,
        spike_end_s=spike_end,
        runs=len(reports),
        per_second=seconds_record(rows_by_run, phases),
        recovery_s=recovery_estimate(found, after),
        goodput_rps=[mean_estimate(runs) for runs in goodput],
        refused_rps=[statistics.mean(runs) for runs in per_phase(rows_by_run, phases, "refused")],
        errors_rps=[
            statistics.mean(runs) for runs in per_phase(rows_by_run, phases, "errors", "other")
        ],
        send_lag_p99_ms=late,
        kept_schedule=late <= verdict.allowed_late_ms(options.slo),
        db_delay_ms=target.db_delay * 1000,
        configuration=searched.configuration,
        **target.condition,
    )


def mean_estimate(values):
    """The mean of the runs' values, with its 95 % interval over them."""

    def mean(drawn):
        return statistics.mean(values[i] for i in drawn)

    return intervals.estimate(mean(range(len(values))), intervals.bootstrap(len(values), mean))


def options(group):
    group.add_argument(
        "--spike",
        type=spike_phases,
        nargs="?",
        const=DEFAULT_SPIKE,
        default=(),
        metavar="Mx:S,...",
        help="with --slo: then offer each app a step load of multiples of its own capacity, "
        f"phase after phase (alone: {','.join(map(str, DEFAULT_SPIKE))}; shorter, e.g. "
        "0.5x:4s,3x:2s,0.5x:6s): per second the p99, goodput and 503s, and the recovery, "
        "the time after the spike until every second keeps the objective (bench/modes/spike.py)",
    )


MODE = Mode(
    "spike",
    section,
    charts=(("draw_spike", "-spike.png"),),
    title="a spike",
    options=options,
    fields=(("spike", tuple[Phase, ...], ()),),
    refused=refused,
    steps=steps,
    measure_apps=measure_apps,
)
