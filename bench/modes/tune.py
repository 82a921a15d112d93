"""--tune: each app at its best, per condition. For every app and every
condition of the run (database delay x wrk connections), the configurations
its practitioners would try (bench/stack/deployments.py TUNING: sync workers,
workers x threads, gevent with psycogreen; event loops at 1, 2 or 4
processes, which sizes their pools), all on the same cores and the same
connection budget, each get one short run per route: the search, whose
curve the report keeps. The best, by the geometric mean of its req/s over
the routes, is then measured as any deployment is, in rotation, --repeat
times, and reported under the deployment name "best"."""

import dataclasses
import math

from bench.modes import peak
from bench.records import Trial
from bench.report.tables import number, table
from bench.rotation import Step, every_app, measure_in_rotation
from bench.routes import ROUTES
from bench.stack.deployments import TUNING

CHARTS = []
BEST = "best"
TRIAL_SECONDS = 2  # each configuration's run per route and condition, in the search
AS_SHIPPED = ("sync", "loop2")  # each app's serve.sh as it ships: what the knobs are against


def candidates():
    """The deployments --tune starts for every app that they fit."""
    return list(TUNING)


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
    return {
        "search": (apps * len(search_rounds(trial, routes)), peak.run_seconds(trial)),
        "run": (len(options.stack.apps) * len(peak.rounds(runs, routes)), peak.run_seconds(runs)),
    }


def run(stage, found):
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
    trials = [
        trial(target, connections, reports)
        for (_, connections), (target, reports) in runs.items()
        if len(reports) == len(stage.routes)
    ]
    for key in {(t.app, t.connections) for t in trials}:
        mine = [t for t in trials if (t.app, t.connections) == key]
        max(mine, key=lambda t: t.score).chosen = True
    return trials


def trial(target, connections, reports):
    rates = {route: report["requests_per_s"] for route, report in reports.items()}
    return Trial(
        app=target.app,
        deployment=target.deployment,
        connections=connections,
        db_delay_ms=target.db_delay * 1000,
        requests_per_s=rates,
        p99_ms={route: report["latency_ms"]["p99"] for route, report in reports.items()},
        score=math.prod(max(rate, 0.001) for rate in rates.values()) ** (1 / len(rates)),
    )


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


INTRO = (
    "Per app and condition, the configurations its practitioners would try, on the same "
    "cores and connection budget, each run {seconds}s per route (the curve below); the best "
    "by the geometric mean of its req/s over the routes, then measured in rotation as any "
    "deployment is (the tables headed _best_). Against: each app's serve.sh as it ships "
    "(sync workers for Flask and Falcon, one event loop per core for Quart and Sanic)."
)


def knob(trials):
    """The best trial's score over the as-shipped one's, or None."""
    best = next(t for t in trials if t.chosen)
    shipped = [t for t in trials if t.deployment in AS_SHIPPED]
    return best.score / shipped[0].score if shipped and shipped[0].score else None


def section(results):
    """The best configuration per app and condition, what it gained over the
    as-shipped one, and the curve: every configuration's req/s and p99."""
    trials = results.tuning
    if not trials:
        return []
    routes = list(trials[0].requests_per_s)
    conditions = list(dict.fromkeys((t.db_delay_ms, t.connections) for t in trials))
    lines = ["## Each app at its best (--tune)", "", INTRO.format(seconds=TRIAL_SECONDS), ""]
    header = ["app", "DB delay", "clients", "best", "x as shipped"]
    rows = []
    for app in dict.fromkeys(t.app for t in trials):
        for delay, clients in conditions:
            mine = [
                t for t in trials if (t.app, t.db_delay_ms, t.connections) == (app, delay, clients)
            ]
            if mine:
                best = next(t for t in mine if t.chosen)
                rows.append(
                    [
                        app,
                        f"{delay:g} ms",
                        str(clients),
                        best.deployment,
                        number(knob(mine), "{:.2f}x"),
                    ]
                )
    lines += [
        table(header, rows),
        "",
        "The curve (search runs, req/s and p99 ms per route, and the configuration's "
        "memory once started; the chosen in bold):",
        "",
    ]
    header = ["app", "DB delay", "clients", "configuration"]
    header += [f"{ROUTES[route].label} req/s, p99" for route in routes] + ["PSS MiB at rest"]
    rest = {(a.app, a.deployment, a.db_delay_ms): a.pss_rest_mib for a in results.apps}
    rows = []
    order = list(TUNING)
    for t in sorted(
        trials, key=lambda t: (t.app, t.db_delay_ms, t.connections, order.index(t.deployment))
    ):
        name = f"**{t.deployment}**" if t.chosen else t.deployment
        cells = [f"{t.requests_per_s[r]:,.0f}, {t.p99_ms[r]:,.1f}" for r in routes]
        memory = number(rest.get((t.app, t.deployment, t.db_delay_ms)))
        rows.append([t.app, f"{t.db_delay_ms:g} ms", str(t.connections), name, *cells, memory])
    return lines + [table(header, rows), ""]
