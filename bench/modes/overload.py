"""Goodput past capacity (--overload 0.5,1,1.5,2,4, with --slo): once each
app's capacity is found and confirmed at this database delay (the capacity
mode's records), the open loop offers it these multiples of its own
capacity, per route and connection count, --repeat runs of --duration each
(after the --warmup) in rotation, and records per second of the schedule:
the goodput (2xx answers within the objective, timed from each request's
due time as the search times them) with its 95 % interval over the runs,
the 2xx beyond it, the 503 refusals (how fast, and whether they carried
Retry-After), every other error by kind, and whether the generator kept its
schedule. Past capacity goodput, not throughput, is the figure (Google's SRE
book, "Handling Overload"): a server that refuses the excess cheaply keeps
it near its capacity; one whose queue grows answers everything late."""

import dataclasses

from bench import intervals
from bench.load.openloop import ERROR_KINDS, MAX_RATE
from bench.modes import open_loop, peak
from bench.modes.capacity import drive, verdict
from bench.modes.mode import Mode
from bench.parsers import multiple_list
from bench.records import Overload
from bench.report.overload import section  # the mode's section: a view of its records
from bench.report.tables import condition
from bench.rotation import Step, measure_in_rotation


def refused(options):
    """Why its option cannot run with the others, or None."""
    if options.overload and not options.slo:
        return "--overload offers multiples of each app's capacity: give --slo too"
    return None


def steps(options, apps):
    """Its steps per database delay, for Progress: every multiple on every
    route and connection count, in every round."""
    runs = options.runs
    count = apps * len(options.routes) * len(runs.connections) * len(options.overload)
    return {"overload": (count * runs.repeat, peak.run_seconds(runs))} if count else {}


def measure_apps(stage, gathered):
    """The Overloads of every app whose capacity was found here."""
    options = stage.options
    if not options.overload:
        return {}
    offers = {}  # (target label, route, connections, multiple) -> (its Capacity, rate)
    for target in stage.measured:
        for route in stage.routes:
            for connections in options.runs.connections:
                searched = capacity_of(gathered.get("capacity", []), target, route, connections)
                for multiple in options.overload if searched else []:
                    rate = rate_at(multiple, searched.capacity_rps["value"])
                    offers[(target.label, route.key, connections, multiple)] = (searched, rate)
    reports = {key: [] for key in offers}

    def measure(target, step, context):
        report = drive.offered(target, step, context)
        reports[(target.label, step.route.key, step.connections, step.multiple)].append(report)
        return report

    planned = rounds(stage, offers)
    measure_in_rotation(stage, planned, measure, open_loop.describe)
    kept = {target.label: target for target in stage.measured if target.measurable}
    return {
        "overload": [
            record(kept[key[0]], key, offers[key], runs, options)
            for key, runs in reports.items()
            if runs and key[0] in kept
        ]
    }


def rate_at(multiple, capacity_rps):
    """The rate offered at a multiple of a capacity: whole requests/s, at
    least 1, at most what one generator process can offer."""
    return min(MAX_RATE, max(1.0, float(round(multiple * capacity_rps))))


@dataclasses.dataclass(frozen=True)
class Offer(Step):
    """A step at a multiple of its app's capacity (the rate is that multiple of it)."""

    multiple: float = 1.0

    def label(self, target):
        return f"{super().label(target)} ({self.multiple:g}x its capacity)"


def rounds(stage, offers):
    """Per route, connection count and multiple, every round: each app its
    multiple of its own capacity (None where it has none)."""
    runs = stage.options.runs
    return [
        offer_step(offers, route, connections, multiple, repeat, runs.repeat)
        for route in stage.routes
        for connections in runs.connections
        for multiple in stage.options.overload
        for repeat in range(runs.repeat)
    ]


def offer_step(offers, route, connections, multiple, repeat, repeats):
    """A round: target -> its Offer at multiple, or None."""

    def step(target):
        offer = offers.get((target.label, route.key, connections, multiple))
        if offer is None:
            return None
        return Offer("overload", route, connections, offer[1], repeat, repeats, multiple)

    return step


def capacity_of(capacities, target, route, connections):
    """The Capacity found for target on route at connections, at its
    database delay and condition, where it held at some rate; else None."""
    for found in capacities:
        if (
            (found.app, found.configuration or found.deployment) == (target.app, target.deployment)
            and found.db_delay_ms == target.db_delay * 1000
            and (found.route, found.connections) == (route.key, connections)
            and condition(found) == tuple(map(target.condition.get, ("fan_out", "upstream_delay")))
        ):
            return found if found.capacity_rps["value"] else None
    return None


def within(encoded, limit_ms):
    """How many of an encoded histogram's values are within limit_ms."""
    histogram = verdict.decoded(encoded)
    return histogram.get_total_count() - verdict.beyond(histogram, limit_ms)


def refusal_ms(reports):
    """The 503 refusals' p50 and p99 over the runs (histograms merged), or None."""
    encoded = [r["refused"]["histogram"] for r in reports if r["refused"]["count"]]
    if not encoded:
        return None
    total = verdict.merged(encoded)
    return {f"p{p}": total.get_value_at_percentile(p) / 1000 for p in (50, 99)}


def sources_in_flight(reports):
    """The most ratings asked of the sources at once in any run (bench/load/
    measure.py's upstream), or None: not the ratings route."""
    most = [r["upstream"]["most_in_flight"] for r in reports if "upstream" in r]
    return max(most, default=None)


def record(target, key, offer, reports, options):
    """One app's runs (reports) at one multiple of its capacity as its
    Overload record; key: (its label, route, connections, multiple); offer:
    (its Capacity record, the rate offered)."""
    _, route, connections, multiple = key
    searched, rate = offer
    objective = options.slo
    seconds = options.runs.duration
    span = len(reports) * seconds
    good = [within(r["ok_histogram"], objective.ms) for r in reports]

    def goodput(drawn):
        return sum(good[i] for i in drawn) / (len(drawn) * seconds)

    everything = range(len(reports))
    refused = sum(r["refused"]["count"] for r in reports)
    errors = {"other_status": sum(r["non_2xx"] for r in reports) - refused}
    errors.update({kind: sum(r["errors"][kind] for r in reports) for kind in ERROR_KINDS})
    late = max(verdict.late_ms(r) for r in reports)
    due = sum(r["pace"]["due"] for r in reports)
    answered = sum(r["pace"]["answered"] for r in reports)
    return Overload(
        app=target.app,
        deployment=searched.deployment,  # "best" for --tune's, as the capacity's
        route=route,
        connections=connections,
        multiple=multiple,
        capacity_rps=searched.capacity_rps["value"],
        offered_rps=rate,
        seconds=seconds,
        runs=len(reports),
        goodput_rps=intervals.estimate(
            goodput(everything), intervals.bootstrap(len(reports), goodput)
        ),
        late_rps=(sum(r["ok"] for r in reports) - sum(good)) / span,
        refused_rps=refused / span,
        errors_rps={kind: count / span for kind, count in errors.items()},
        refusal_ms=refusal_ms(reports),
        retry_after=intervals.ratio(sum(r["refused"]["retry_after"] for r in reports), refused),
        send_lag_p99_ms=late,
        kept_schedule=late <= verdict.allowed_late_ms(objective),
        pace=intervals.ratio(answered, due),
        sources_in_flight=sources_in_flight(reports),
        db_delay_ms=target.db_delay * 1000,
        configuration=searched.configuration,
        **target.condition,
    )


def options(group):
    group.add_argument(
        "--overload",
        type=multiple_list,
        default=(),
        metavar="M[,M...]",
        help="with --slo: then offer each app these multiples of its own capacity (per route, "
        "connection count and database delay), e.g. 0.5,1,1.5,2,4: goodput (2xx within the "
        "objective), 503 refusals and other errors per second (bench/modes/overload.py)",
    )


MODE = Mode(
    "overload",
    section,
    charts=(("draw_overload", "-overload.png"),),
    title="past capacity",
    options=options,
    fields=(("overload", tuple[float, ...], ()),),  # multiples of each capacity
    refused=refused,
    steps=steps,
    measure_apps=measure_apps,
)
