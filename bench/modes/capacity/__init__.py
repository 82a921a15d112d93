"""Capacity at a latency objective (--slo 100ms, --slo p95:50ms): for every
app, route, connection count and database delay, the most requests/s the
open loop (bench/load/openloop: latency from each request's due time, so
corrected for coordinated omission) can offer with the objective's
percentile within it, a request that failed (an error, a refusal: the apps'
503 past their admission limit) counted as one beyond it: "p99 <= 100 ms"
is "99 % of the requests answered 2xx within 100 ms", as an SLO counts good
events among valid ones.

Its parts: the search (search.py: which rate to offer next, and the
confirmation), the verdict on one step's runs (verdict.py), the driving of
every search in rotation (drive.py), what bounds the capacity (bounds.py)
and the records (records.py). The mode's section is a view of its records
(bench/report/capacity.py).

The report's first table then ranks the apps by capacity, closed-loop 2xx req/s
beside it, each ratio to the baseline with its interval ("no measurable
difference" inside it or the A/A floor), the bound that binds and the open
loop's connection model."""

from bench.load import openloop
from bench.modes.capacity.drive import Stepping, confirmed, peak_of, searched
from bench.modes.capacity.records import ratio_records, record
from bench.modes.capacity.search import CONFIRM_STEPS, CONFIRM_TRIES, MAX_STEPS
from bench.modes.mode import Mode
from bench.options import Objective
from bench.parsers import positive_seconds, slo
from bench.report.capacity import section  # the mode's section: a view of its records

DEFAULT_SLO_STEP = 10  # wrk2 calibrates for 10 s: a shorter step's p99 means little
DEFAULT_OBJECTIVE = Objective(99.0, 100.0)  # --tune's without --slo: the 100 ms p99


def options(group):
    group.add_argument(
        "--slo",
        type=slo,
        metavar="[pP:]LATENCY",
        help="a latency objective, e.g. 100ms (the p99) or p95:50ms: each app's capacity, the "
        "most requests/s the open loop can offer with that percentile within it and no error, "
        "found by bracketing and bisecting from the closed-loop peak, --repeat rounds per step "
        "in rotation, with a bootstrap 95%% interval (bench/modes/capacity/); tables then "
        "rank by it, and --tune chooses by it",
    )
    group.add_argument(
        "--slo-step",
        type=positive_seconds,
        default=DEFAULT_SLO_STEP,
        help=f"each step of the capacity search, per round (default {DEFAULT_SLO_STEP}s: a p99 "
        "of fewer requests means little); the capacity's confirmation runs 3 steps' length",
    )


def refused(options):
    """Why its options cannot run with the others, or None."""
    if options.slo and options.rates:
        return "--slo finds the rates to offer itself: not with --rate"
    if options.slo_step != DEFAULT_SLO_STEP and not options.slo:
        return "--slo-step is the capacity search's: give --slo too"
    return None


def searching(options):
    """Whether the run searches capacities: --slo's, or --tune's for each configuration."""
    return bool(options.slo or options.tune)


def extras(options):
    return openloop.EXTRAS if searching(options) else []  # its search offers through it


def objective_of(options):
    """The objective the run measures at: --slo's, else --tune's default."""
    return options.slo or DEFAULT_OBJECTIVE


def recorded(options):
    """The objective, once: what the report's tables and charts rank by, and
    whether --slo gave it (else it is --tune's default)."""
    if not searching(options):
        return {}
    return {"objective": objective_of(options).as_dict() | {"given": bool(options.slo)}}


def steps(options, apps):
    """Its steps per database delay, for Progress: at most MAX_STEPS rates on
    every route and connection count, each in every round."""
    if not options.slo:
        return {}
    runs = options.runs
    searches = apps * len(options.routes) * len(runs.connections)
    each = options.slo_step + runs.warmup + 1
    confirm = CONFIRM_STEPS * options.slo_step + runs.warmup + 1
    return {
        "capacity": (searches * MAX_STEPS * runs.repeat, each),
        "confirm": (searches * CONFIRM_TRIES, confirm),
    }


def measure_apps(stage, gathered):
    """The Capacities of every app (after the peaks, whose req/s they start from)."""
    options = stage.options
    if not options.slo:
        return {}
    runs = options.runs
    peaks = gathered.get("measurements", [])
    starts = []
    for target in stage.measured:
        for route in stage.routes:
            for connections in runs.connections:
                start = peak_of(peaks, target, route, connections)
                if start and start.summary.ok_per_s:
                    # the 2xx answers: a limit's refusals are not the app's rate
                    rps = start.summary.ok_per_s  # its deployment: "best" for --tune's
                    starts.append((target, route, connections, rps, start.deployment))
    kept = searched(stage, starts, Stepping(options.slo, options.slo_step, runs.repeat))
    kept = confirmed(stage, kept, options.slo_step)
    ratios, floors = ratio_records(kept)
    return {
        "capacity": [record(s, options.slo_step) for s in kept],
        "ratios": ratios,
        "noise_floor": floors,
    }


MODE = Mode(
    "capacity",
    section,
    title="capacity at a latency objective",
    options=options,
    fields=(("slo", Objective | None, None), ("slo_step", int, DEFAULT_SLO_STEP)),
    refused=refused,
    extras=extras,
    recorded=recorded,
    steps=steps,
    measure_apps=measure_apps,
)
