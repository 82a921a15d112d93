"""The open-loop rate (--rate): every app offered the same request rates by
the open-loop generator (bench/load/openloop/), in rotation as the peaks are.
Requests leave on a schedule whether or not earlier ones have returned, so a
stall shows in the tail; the POST runs keep the nothing-lost books.

--rate auto offers fractions of the *slowest* app's closed-loop peak on each
route (per deployment); in a server matrix, one rate for every pair
(bench/modes/server_matrix.py). Its section: per deployment and database
delay, every app at every rate; its chart, the latency spectrum and p99 over
time at the highest rate."""

from urllib.parse import urlsplit

from bench.load import openloop
from bench.load.measure import Generator, measure_once
from bench.modes import peak, server_matrix
from bench.modes.mode import Mode
from bench.options import Rates
from bench.parsers import rate_list
from bench.records import Rate
from bench.report.tables import (
    CPU_HEADER,
    condition,
    condition_words,
    cpu_cells,
    delay_words,
    memory_cell,
    number,
    rest_of,
    table,
)
from bench.rotation import Step, measure_in_rotation
from bench.routes import ROUTES
from bench.sut import cost


def rates_per_route(options):
    """How many rates each app is offered on each route (0 without --rate)."""
    if not options.rates:
        return 0
    if not options.rates.auto:
        return len(options.rates.given)
    return 1 if server_matrix.is_matrix(options.sut) else len(openloop.AUTO_FRACTIONS)


def steps(options, apps):
    """Its steps per database delay, for Progress: every rate on every route."""
    runs = apps * len(options.routes) * rates_per_route(options)
    return {"rate": (runs, peak.run_seconds(options.runs))}


def measure_apps(stage, gathered):
    """The Rates of every app, after the peaks (auto's rates are theirs)."""
    if not stage.options.rates:
        return {}
    planned = rounds(stage.options, gathered.get("measurements", []), stage.measured, stage.routes)
    done = measure_in_rotation(stage, planned, measure, describe)
    return {"openloop": collect(done, stage.measured)}


def rates_for(options, peaks, deployment, route):
    """The rates offered on route in deployment: --rate's, or auto's."""
    if not options.rates.auto:
        return list(options.rates.given)
    matrix = server_matrix.is_matrix(options.sut)
    found = [
        p.summary.requests_per_s
        for p in peaks
        if (p.route, p.connections) == (route.key, options.runs.connections[0])
        and (server_matrix.sane(p) if matrix else p.deployment == deployment)
    ]
    fractions = (server_matrix.FRACTION,) if matrix else openloop.AUTO_FRACTIONS
    return openloop.auto_rates(found, fractions)


def generator(target, route, rate, runs, phases=None, objective_ms=None):
    """The open-loop generator as measure_once's Generator: a request that timed out
    or broke after it was sent may have been written. phases: a schedule
    [(seconds, rate)] offered instead of rate (its warm-up: the schedule's
    first seconds); objective_ms: per second, the 2xx within it counted."""

    def command(seconds):
        return openloop.command(
            target.url.rstrip("/") + route.path,
            rate,
            max(runs.connections),
            seconds,
            route.method,
            route.body.decode() if route.body else None,
            runs.timeout,
            runs.cpus,
            runs.write_token_file,
            phases=phases and openloop.first(phases, seconds),
            objective_ms=objective_ms,
        )

    def unanswered(result):
        return result["errors"]["timeout"] + result["errors"]["socket"]

    return Generator(command, openloop.run, unanswered)


def rounds(options, peaks, measured, routes):
    """Per route, one round per rate offered: each app its deployment's rate."""
    connections = max(options.runs.connections)
    planned = []
    for route in routes:
        offered = {t.deployment: rates_for(options, peaks, t.deployment, route) for t in measured}
        for index in range(max(len(rates) for rates in offered.values())):

            def step(target, route=route, index=index, offered=offered):
                rates = offered[target.deployment]
                if index < len(rates):
                    return Step("rate", route, connections, rates[index])

            planned.append(step)
    return planned


def measure(target, step, context):
    offered = generator(target, step.route, step.rate, context.runs)
    return measure_once(target, step.route, context.db, context.runs, context.log, offered)


def describe(report):
    latency = report["latency_ms"] or {}
    return (
        f"achieved {report['achieved_rate']:,.0f} req/s, "
        f"{report['success_rate']:.1%} 2xx, p99 {latency.get('p99', 0):,.1f} ms"
    )


def collect(done, measured):
    """The Rates of the apps still measured at the end."""
    kept = {(t.app, t.deployment) for t in measured if t.measurable}
    return [
        Rate(
            app=target.app,
            deployment=target.deployment,
            db_delay_ms=target.db_delay * 1000,
            route=step.route.key,
            rate=step.rate,
            report=report,
            pss_mib=report.get("pss_mib"),
            cpu_us_per_request=cost.per_request(report.get("cpu")),
            **target.condition,
        )
        for target, step, report, _, _ in done
        if (target.app, target.deployment) in kept
    ]


HEADER = [
    "route",
    "offered req/s",
    "app",
    "achieved",
    "success",
    "mean",
    "p50",
    "p90",
    "p95",
    "p99",
    "p99.9",
    "max",
    "PSS MiB rest -> end",
    *CPU_HEADER,
    "rows added / 2xx",
    "connections opened / requests",
]
PERCENTILES = ("mean", "p50", "p90", "p95", "p99", "p99.9", "max")


def row_cells(rate, apps):
    """One row: the rate offered and what came of it; apps: the run's AppRuns."""
    report = rate.report
    latency = report["latency_ms"] or {}
    ledger = report.get("ledger")
    return [
        ROUTES[rate.route].label,
        f"{rate.rate:,g}",
        rate.app,
        f"{report['achieved_rate']:,.0f}",
        f"{report['success_rate']:.1%}",
        *[number(latency.get(key), "{:,.1f}") for key in PERCENTILES],
        memory_cell(rest_of(apps, rate), [rate.pss_mib]),
        *cpu_cells(rate.cpu_us_per_request),
        f"{ledger['rows_added']} / {ledger['responses_2xx']}" if ledger else "-",
        connections_cell(report),
    ]


def connections_cell(report):
    """The connection model: kept alive, or one per request where the server
    closes each (gunicorn's sync workers); "-" for a file that predates the count."""
    opened = report.get("connections_opened")
    if opened is None:
        return "-"
    answered = report["ok"] + report["non_2xx"]
    model = "kept alive" if opened * 2 <= answered else "one per request"
    return f"{opened:,} / {answered:,} ({model})"


def rates_of(rates, deployment, delay, sources):
    """The Rates at a deployment, database delay and condition (the rating sources)."""
    return [
        r
        for r in rates
        if (r.deployment, r.db_delay_ms, condition(r)) == (deployment, delay, sources)
    ]


def section(results):
    """Latency at a fixed load: one table per deployment, database delay and
    condition (the ratings route's sources)."""
    rates = results.openloop
    generator = results.generator or {}
    order = {app.app: index for index, app in enumerate(results.apps)}
    lines = []
    for deployment, delay, sources in dict.fromkeys(
        (r.deployment, r.db_delay_ms, condition(r)) for r in rates
    ):
        heading = f"{deployment} deployment{delay_words(delay, ', ')}"
        heading += condition_words(rates_of(rates, deployment, delay, sources)[0], ", ")
        lines += [
            f"## Latency at a fixed load, {heading}",
            "",
            f"Open loop ({generator.get('version', 'bench.openloop')}): requests leave on a "
            "schedule, latency from each one's due time; success = 2xx / sent. Up to "
            f"{generator.get('connections', '?')} connections, opened on demand and kept alive "
            "where the server allows (gunicorn's sync workers close each: then one per request).",
            "",
        ]
        here = sorted(
            rates_of(rates, deployment, delay, sources),
            key=lambda r: (list(ROUTES).index(r.route), r.rate, order[r.app]),
        )
        lines += [table(HEADER, [row_cells(rate, results.apps) for rate in here]), ""]
    return lines


def options(group):
    group.add_argument(
        "--rate",
        dest="rates",
        type=rate_list,
        metavar="R[,R...]|auto",
        help="open loop: offer each app these requests/s (bench/load/openloop: latency from "
        "each request's due time); auto: 25/50/75/90%% of the slowest app's wrk peak on "
        "each route, measured first",
    )


def refused(options):
    """Why its options cannot run with the others, or None: the generator (of
    --rate's runs and --slo's search) speaks plain HTTP."""
    offered = options.rates or options.slo
    if offered and options.target and urlsplit(options.target).scheme == "https":
        return "the open-loop generator speaks plain HTTP: not with an https:// --target"
    return None


def extras(options):
    return openloop.EXTRAS if options.rates else []


def recorded(options):
    """The generator, once: what offered every rate."""
    if not options.rates:
        return {}
    generator = {"name": openloop.NAME, "version": openloop.version()}
    rates = {"rates": options.rates.recorded(), "connections": max(options.runs.connections)}
    return {"generator": generator | rates}


MODE = Mode(
    "open_loop",
    section,
    charts=(("draw_latency", "-latency.png"),),
    title="the open loop",
    options=options,
    fields=(("rates", Rates | None, None),),  # None: the closed loop only
    refused=refused,
    extras=extras,
    recorded=recorded,
    steps=steps,
    measure_apps=measure_apps,
)
