"""--tune: each app at its best, per condition. For every app and every
condition of the run (database delay x wrk connections), the configurations
its practitioners would try (bench/sut/deployments.py TUNING: sync workers,
workers x threads, gevent with psycogreen; event loops at 1, 2 or 4
processes, which sizes their pools), all on the same cores and the same
connection budget, each get one short closed-loop run per route, then a
short capacity search from it (bench/modes/capacity/, TRIAL_STEPS rates of
TRIAL_SECONDS, one round) at the latency objective: --slo's, else
capacity.DEFAULT_OBJECTIVE (100 ms p99). That is the search, whose curve the report
keeps. The best, by the geometric mean of its capacities over the routes, is
then measured as any deployment is, in rotation, --repeat times, and
reported under the deployment name "best". A configuration that kept the
objective at no rate offered on some route is never the best: the curve
lists it with the reason; an app none of whose configurations kept it has
no best."""

import dataclasses
import math

from bench.load import wrk
from bench.modes import capacity, peak
from bench.modes.capacity import drive
from bench.modes.mode import Mode
from bench.records import Trial
from bench.report.tune import section  # the mode's section: a view of its records
from bench.rotation import Step, every_app, measure_in_rotation
from bench.routes import ROUTES
from bench.sut.deployments import TRIAL_SECONDS, TRIAL_STEPS, TUNING

BEST = "best"


SOCKET_WAITS = ("threads64",)  # candidates only when requests wait on sources (--fan-out)


def candidates(fan_out=False):
    """The deployments --tune starts for every app that they fit: with
    fan_out, larger thread counts too (a request waiting on its sources holds
    its thread, not a database connection)."""
    return [name for name in TUNING if fan_out or name not in SOCKET_WAITS]


def search_runs(runs):
    """The search's Runs: one short run per configuration and route."""
    return dataclasses.replace(runs, duration=TRIAL_SECONDS, warmup=min(runs.warmup, 1), repeat=1)


def search_rounds(runs, routes):
    return [
        every_app(Step("search", route, connections))
        for connections in runs.connections
        for route in routes
    ]


def steps(options, apps):
    """Its steps per database delay, for Progress: the search (every
    configuration) and the confirming runs (one configuration per app)."""
    if not options.tune:
        return {}
    runs, routes = options.runs, options.routes
    trial = search_runs(runs)
    searched = apps * len(search_rounds(trial, routes)) * (1 + TRIAL_STEPS)
    return {
        "search": (searched, peak.run_seconds(trial)),
        "run": (len(options.sut.apps) * len(peak.rounds(runs, routes)), peak.run_seconds(runs)),
    }


def measure_apps(stage, gathered):
    """The search's Trials, then the best of each app confirmed in rotation as
    Peaks of the deployment "best"."""
    if not stage.options.tune:
        return {}
    peak.prime(stage)
    trials = search(stage)
    confirm = confirm_rounds(stage.context.runs, stage.routes, trials)
    done = measure_in_rotation(stage, confirm, peak.measure, peak.describe)
    peaks = peak.collect(done, stage.measured, stage.context.runs, stage.routes)
    return {"tuning": trials, "measurements": relabel(peaks)}


def search(stage):
    """The Trials: one short run of every configuration on every route, at
    every connection count; the best of each app and condition chosen."""
    trial_runs = search_runs(stage.context.runs)
    trial_stage = dataclasses.replace(
        stage, context=dataclasses.replace(stage.context, runs=trial_runs)
    )
    searched = search_rounds(trial_runs, stage.routes)
    done = measure_in_rotation(trial_stage, searched, peak.measure, peak.describe)
    runs = {}
    for target, step, report, _, _ in done:
        runs.setdefault((target.label, step.connections), (target, {}))[1][step.route.key] = report
    starts = [
        (target, step.route, step.connections, report["ok_per_s"], target.deployment)
        for target, step, report, _, _ in done
        if report["ok_per_s"]
    ]
    objective = capacity.objective_of(stage.options)
    seconds = min(TRIAL_SECONDS, trial_runs.duration)
    stepping = drive.Stepping(objective, seconds, rounds=1, most=TRIAL_STEPS, kind="search")
    capacities = {}
    for s in drive.searched(trial_stage, starts, stepping):
        key = (s.target.label, s.connections)
        capacities.setdefault(key, {})[s.route.key] = s.capacity([0])
    trials = [
        trial(target, connections, reports, capacities.get((target.label, connections), {}))
        for (_, connections), (target, reports) in runs.items()
        if len(reports) == len(stage.routes)
    ]
    choose(trials, objective)
    return trials


def choose(trials, objective):
    """Mark the best of each app and condition: the most capacity at the
    objective (the geometric mean over the routes) among the configurations
    that kept it at some rate on every route; the others say why not."""
    for t in trials:
        broke = [ROUTES[route].label for route, rps in t.capacity_rps.items() if not rps]
        missing = [ROUTES[route].label for route in t.requests_per_s if route not in t.capacity_rps]
        if broke or missing:
            t.rejected = (
                f"kept {objective} at no rate offered on {', '.join(broke + missing)}"
                if broke
                else f"no capacity measured on {', '.join(missing)}"
            )
    for key in {(t.app, t.connections, t.db_delay_ms) for t in trials}:
        mine = [t for t in trials if (t.app, t.connections, t.db_delay_ms) == key]
        eligible = [t for t in mine if not t.rejected]
        if eligible:
            max(eligible, key=lambda t: t.score).chosen = True


def trial(target, connections, reports, capacities):
    """One configuration's Trial: its closed-loop runs, and its capacities
    (route -> req/s at the objective, 0 where it kept it at no rate)."""
    rates = {route: report["requests_per_s"] for route, report in reports.items()}
    return Trial(
        app=target.app,
        deployment=target.deployment,
        connections=connections,
        db_delay_ms=target.db_delay * 1000,
        requests_per_s=rates,
        p99_ms={route: report["latency_ms"]["p99"] for route, report in reports.items()},
        score=geometric_mean(capacities.values()) if capacities else 0.0,
        capacity_rps=capacities,
        **target.condition,
    )


def geometric_mean(values):
    values = list(values)
    return math.prod(max(value, 0.001) for value in values) ** (1 / len(values))


def confirm_rounds(runs, routes, trials):
    """peak's rounds, each step taken only by the configuration chosen for
    its app at its connection count."""
    chosen = {(t.app, t.connections): t.deployment for t in trials if t.chosen}

    def only_chosen(step):
        return lambda target: (
            step if chosen.get((target.app, step.connections)) == target.deployment else None
        )

    return [
        only_chosen(Step("run", route, connections, None, repeat, runs.repeat))
        for repeat in range(runs.repeat)
        for connections in runs.connections
        for route in routes
    ]


def relabel(peaks):
    """The confirmed Peaks, as the deployment "best", each with its configuration."""
    for measured in peaks:
        measured.configuration, measured.deployment = measured.deployment, BEST
    return peaks


def options(group):
    group.add_argument(
        "--tune",
        action="store_true",
        help="each app at its best per condition (database delay x connections): a short run "
        "of every configuration its practitioners would try (sync workers, workers x threads, "
        "gevent with psycogreen; event loops x pool size; bench/modes/tune.py), on the same "
        "cores and --db-connections, then the best measured in rotation; replaces "
        "--deployment and --server",
    )


def refused(options):
    """Why its option cannot run with the others, or None."""
    if options.tune and (options.target or options.rates):
        return "--tune measures closed loop the apps it starts: not with --target or --rate"
    return None


MODE = Mode(
    "tune",
    section,
    title="each app at its best",
    options=options,
    fields=(("tune", bool, False),),
    refused=refused,
    chooses=lambda options: candidates(fan_out=bool(options.fan_outs)) if options.tune else None,
    tools=lambda options: [wrk.PROGRAM] if options.tune else [],  # its trials' closed loop
    steps=steps,
    measure_apps=measure_apps,
)
