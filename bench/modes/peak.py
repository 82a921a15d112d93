"""The closed-loop peak: wrk with a fixed number of connections against every
app on every route, in rotation, --repeat times; per app, route and connection
count the median run, its min-max, its latency and the books of a POST. Its
section: per deployment, connection count and database delay, the
article-style ratio table (with the pgbench ceiling) and the latency table."""

from bench.load import wrk
from bench.load.measure import Generator, measure_once
from bench.modes import server_matrix
from bench.modes.mode import Mode
from bench.progress import RUN_OVERHEAD_SECONDS
from bench.records import Peak
from bench.report.tables import (
    condition,
    condition_words,
    delay_words,
    latency_table,
    ratio_table,
    sections,
)
from bench.rotation import Step, every_app, measure_in_rotation
from bench.sut import cost


def skipped(options):
    """--rate with rates given measures at those rates only; auto needs the peaks."""
    return bool(options.rates) and not options.rates.auto


def steps(options, apps):
    """Its steps per database delay, for Progress: the primer, and its runs
    (--tune's are tune's)."""
    closed = not skipped(options)
    runs, routes = options.runs, options.routes
    count = apps * len(rounds(runs, routes)) if closed and not options.tune else 0
    return {
        "primer": (1 if closed and runs.warmup else 0, apps * len(routes) * runs.warmup),
        "run": (count, run_seconds(runs)),
    }


def run_seconds(runs):
    """What one run is expected to take: its warm-up, itself, and around it."""
    return runs.duration + runs.warmup + RUN_OVERHEAD_SECONDS


def measure_apps(stage, gathered):
    """The closed-loop Peaks of every app, after the primer."""
    if skipped(stage.options) or stage.options.tune:
        return {}
    prime(stage)
    done = measure_in_rotation(stage, rounds(stage.context.runs, stage.routes), measure, describe)
    return {"measurements": collect(done, stage.measured, stage.context.runs, stage.routes)}


def generator(target, route, connections, runs):
    """wrk as measure_once's Generator: it stops with up to one request per
    connection in flight, which the server may still have written."""

    def command(seconds):
        return wrk.command(
            target.url,
            route,
            connections,
            runs.threads,
            seconds,
            runs.timeout,
            runs.cpus,
            runs.write_token_file,
        )

    return Generator(command, wrk.run, lambda result: connections)


def prime(stage):
    """One unmeasured run of every app on every route, before the first
    measured one (TechEmpower's primer): without it the first repeat read
    slower for whichever app came first after the starts (its ratios off by
    up to 70% where the later repeats agreed within 20%). Only a route that
    writes waits for its last writes to land (a second of quiet) before its
    reviews are removed: a read leaves nothing to wait for."""
    runs, context = stage.context.runs, stage.context
    if not runs.warmup:
        return
    stage.progress.step(
        "primer", f"primer: every app, every route, {runs.warmup}s each, not measured"
    )
    for route in stage.routes:
        for target in stage.measured:
            primer = generator(target, route, runs.connections[0], runs)
            primer.run(primer.command(runs.warmup), context.log)
        if route.body:
            context.db.clear(settle=True)


def rounds(runs, routes):
    """One round per repeat, connection count and route: every app the same step."""
    return [
        every_app(Step("run", route, connections, None, repeat, runs.repeat))
        for repeat in range(runs.repeat)
        for connections in runs.connections
        for route in routes
    ]


def measure(target, step, context):
    closed_loop = generator(target, step.route, step.connections, context.runs)
    return measure_once(target, step.route, context.db, context.runs, context.log, closed_loop)


def describe(report):
    return f"{report['requests_per_s']:,.0f} req/s, p99 {report['latency_ms']['p99']:.1f} ms"


def collect(done, measured, runs, routes):
    """The Peaks of the measured apps, per app, connection count and route."""
    by_cell = {}
    for target, step, report, turn, place in done:
        report.update(turn=turn, place=place)
        by_cell.setdefault((target.label, step.route.key, step.connections), []).append(report)
    peaks = []
    for target in measured:
        if not target.measurable:
            continue
        for connections in runs.connections:
            for route in routes:
                reports = by_cell.get((target.label, route.key, connections))
                if reports:
                    peaks.append(peak(target, route, connections, reports))
    return peaks


def peak(target, route, connections, reports):
    ledgers = [r["ledger"] for r in reports if "ledger" in r]
    ledger = None
    if ledgers:
        keys = ("responses_2xx", "rows_added", "in_flight")
        ledger = {key: sum(item[key] for item in ledgers) for key in keys}
    return Peak(
        app=target.app,
        deployment=target.deployment,
        db_delay_ms=target.db_delay * 1000,
        connections=connections,
        route=route.key,
        summary=wrk.summarize(reports),
        runs=reports,
        ledger=ledger,
        ledgers=ledgers,
        pss_mib=max((r["pss_mib"] for r in reports if r.get("pss_mib")), default=None),
        cpu_us_per_request=cost.per_request(cost.combined(r.get("cpu") for r in reports)),
        **target.condition,
    )


def what_ran(app):
    """One line per app: its server's command line as the kernel knew it, and
    the processes, threads and connections read back from it."""
    line = f"- {app.app}: `{app.server_command}`"
    if app.workers:
        line += f", {app.workers} worker(s)"
        if app.threads and app.threads > 1:
            line += f" x {app.threads} threads"
        if app.worker_class:
            line += f" ({app.worker_class})"
        if app.os_threads:
            line += f", at most {app.os_threads} OS threads a worker"
        line += f", pool {app.pool_size}"
        if app.replicas > 1:
            line += f" per copy, x {app.replicas} replicas behind {app.proxy} (proxy/api.inc)"
        if app.db_connections:
            line += f", a budget of {app.db_connections} connections"
    if app.differs:
        line += f"; NOT AS ASKED: {app.differs}"
    if app.proxy and app.replicas == 1:
        line += f", behind {app.proxy} (proxy/api.inc)"
    if app.pgbouncer:
        line += f", to Postgres through {app.pgbouncer}"
    versions = ", ".join(f"{name} {v}" for name, v in app.versions.items())
    return f"{line}; {versions}"


def section(results):
    """Per deployment (or server, in a matrix), connection count and database
    delay: the ratio table, the latency table and what ran."""
    kind = "server" if server_matrix.layout(results) else "deployment"
    lines = []
    for deployment, connections, delay, peaks, ceilings, apps in sections(results):
        sources = condition_words(peaks[0], ", ")
        lines += [
            f"## {deployment} {kind}, {connections} connections{delay_words(delay, ', ')}{sources}",
            "",
        ]
        notes = {app.note for app in results.apps if app.deployment == deployment}
        lines += [f"_{note}_\n" for note in sorted(notes - {None})]
        clients = {c.clients for c in ceilings} - {connections}
        if clients:
            lines += [
                f"pgbench ran {', '.join(map(str, clients))} clients, all max_connections allows.\n"
            ]
        lines += [ratio_table(peaks, ceilings, apps, results.wrk["routes"]), ""]
        lines += [latency_table(peaks, results.apps), ""]
        ran = {(p.app, p.configuration or p.deployment) for p in peaks}  # --tune: the chosen
        for app in results.apps:
            here = (app.app, app.deployment) in ran and app.db_delay_ms == delay
            here = here and condition(app) == condition(peaks[0])
            if here and app.status == "measured":
                lines.append(what_ran(app))
        lines.append("")
    return lines


MODE = Mode(
    "peak",
    section,
    charts=(("draw", ".png"),),
    tools=lambda options: [] if skipped(options) or options.tune else [wrk.PROGRAM],
    steps=steps,
    measure_apps=measure_apps,
)
