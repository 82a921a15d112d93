"""One benchmark run, as a list of steps (see run()): open the database,
measure its ceiling, start every app, verify each, measure them in rotation,
save the results. Everything started is stopped on the way out, whatever
happens, by one ExitStack."""

import contextlib
import datetime
import os
import subprocess
import time
from dataclasses import dataclass

import psycopg2

from bench import fixed_rate
from bench.errors import BenchmarkError
from bench.load import openloop, pgbench, wrk
from bench.load.measure import Load, measure_once
from bench.records import Ceiling, Peak, Results, to_json
from bench.report.markdown import markdown
from bench.routes import ROUTES
from bench.stack import database, environment, extras, targets
from bench.stack.delay_proxy import Launched
from bench.stack.processes import pinned_database
from bench.stack.targets import rotation
from tools import ROOT
from tools.serve import database as sample_database

EMBEDDED_DATABASE = "benchmark"  # its own database: the benchmark empties review
SPARE_CONNECTIONS = 10  # for the benchmark's own connection, psql, a curious human
STARTUP_SECONDS = 5  # what an app's start is planned to take, before it is measured
RUN_OVERHEAD_SECONDS = 1  # likewise, around each wrk run: settle, count, reset


@dataclass
class Options:
    apps: list
    deployments: list
    routes: list
    connections: list
    threads: int
    duration: int
    warmup: int
    timeout: int
    repeat: int
    workers: int | None
    pool_size: int
    env: dict
    database_url: str | None
    target: str | None
    port: int
    pin: dict | None
    pgbench: bool
    results_dir: str
    command: str
    proxy: str = "off"  # off, on (nginx in front of every app) or both
    rates: object = None  # --rate: None (closed loop only), "auto", or a list of req/s
    db_delays: tuple = (0.0,)  # --db-delay: seconds added per round trip to Postgres, swept


def say(message):
    print(message, flush=True)


def duration_text(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class Progress:
    """What runs now, and how long is left: the steps still planned, each
    costed at what the steps of its kind have really taken so far (at a nominal
    figure until one has finished). Starting an app, settling and resetting
    around a run cost more than nominal figures say, and differ by machine."""

    def __init__(self, plan):
        """plan: {kind: (number of steps, nominal seconds each)}."""
        self.count = {kind: count for kind, (count, _) in plan.items()}
        self.nominal = {kind: seconds for kind, (_, seconds) in plan.items()}
        self.taken = {kind: [] for kind in plan}
        self.running = None  # (kind, when it started) of the step under way

    def cost(self, kind):
        taken = self.taken[kind]
        return sum(taken) / len(taken) if taken else self.nominal[kind]

    def left(self):
        """Seconds left, counting the step under way as a whole one."""
        return sum(count * self.cost(kind) for kind, count in self.count.items())

    def step(self, kind, message):
        now = time.monotonic()
        if self.running:
            self.taken[self.running[0]].append(now - self.running[1])
        self.running = (kind, now)
        say(f"  {message} (about {duration_text(self.left())} left)")
        self.count[kind] = max(self.count[kind] - 1, 0)


def plan(options):
    """The run's steps for Progress: pgbench runs, app starts, wrk runs; each
    database delay (--db-delay) repeats them all."""
    apps = 1 if options.target else len(targets.pairs(options))
    runs = apps * len(options.connections) * len(options.routes) * options.repeat
    ceiling = 0
    if options.pgbench and (options.database_url or not options.target):
        ceiling = len(options.connections) * len(options.routes)
    per_run = options.duration + options.warmup + RUN_OVERHEAD_SECONDS
    primer = 1 if options.warmup and not closed_loop_skipped(options) else 0
    rates = 0
    if options.rates:
        count = len(options.rates) if options.rates != "auto" else len(openloop.AUTO_FRACTIONS)
        if options.rates == "auto" and fixed_rate.is_matrix(options):
            count = 1
        rates = apps * len(options.routes) * count
    phases = len(options.db_delays)
    return {
        "primer": (primer * phases, apps * len(options.routes) * options.warmup),
        "ceiling": (ceiling * phases, options.duration),
        "start": (0 if options.target else apps * phases, STARTUP_SECONDS),
        "run": (0 if closed_loop_skipped(options) else runs * phases, per_run),
        "rate": (rates * phases, per_run),
    }


def closed_loop_skipped(options):
    """--rate with rates given measures at those rates only; auto needs the peaks."""
    return bool(options.rates) and options.rates != "auto"


@dataclass
class Database:
    """The run's database: its URL, an autocommit connection and its settings;
    all None/empty when a --target's database is not given."""

    url: str | None = None
    connection: object = None
    settings: dict | None = None

    def reset_reviews(self):
        if self.connection is not None:
            database.reset_reviews(self.connection)

    def settle_and_reset(self):
        """Empty review once the previous run's requests in flight have landed."""
        if self.connection is not None:
            database.settled_review_count(self.connection)
            database.reset_reviews(self.connection)


@contextlib.contextmanager
def opened_database(options):
    """Yield the Database: --database-url / DATABASE_URL, else the embedded
    Postgres (started with room for every pool, and stopped, here)."""
    if options.target and not options.database_url:
        say("no --database-url with --target: the nothing-lost check is skipped")
        yield Database()
        return
    needed = 0 if options.target else targets.connections_needed(options) + SPARE_CONNECTIONS
    with contextlib.ExitStack() as stack:
        try:
            url = options.database_url
            if not options.target:  # the target's database is its own: not loaded here
                url = stack.enter_context(
                    sample_database(EMBEDDED_DATABASE, url, max_connections=max(needed, 100))
                )
            connection = database.connect(url)
        except subprocess.CalledProcessError as error:
            raise BenchmarkError(f"the embedded Postgres did not start: {error}") from None
        except psycopg2.OperationalError as error:
            raise BenchmarkError(f"database unreachable: {str(error).strip()}") from None
        except psycopg2.Error as error:
            raise BenchmarkError(f"database unusable: {str(error).strip()}") from None
        stack.callback(connection.close)
        settings = database.server_settings(connection)
        if int(settings["max_connections"]) < needed:
            raise BenchmarkError(
                f"Postgres allows {settings['max_connections']} connections; this run needs "
                f"{needed} (every app's workers x pool size, + spare). Raise max_connections "
                "(PG_MAX_CONNECTIONS for the embedded server, which must then be restarted) "
                "or lower --workers / --pool-size."
            )
        yield Database(url, connection, settings)


def measure_ceiling(db, url, delay, options, routes, progress, log):
    """pgbench per route, one client per wrk connection, as far as
    max_connections allows (the apps never hold more than their pools), at url:
    the database, or the delay proxy the apps reach it through."""
    most = int(db.settings["max_connections"]) - SPARE_CONNECTIONS
    ceiling = []
    for connections in options.connections:
        clients = min(connections, most)
        for route in routes:
            progress.step("ceiling", f"pgbench {route.label} SQL, {clients} clients")
            result = pgbench.run(
                url,
                route.key,
                clients,
                options.threads,
                options.duration,
                pin=options.pin and options.pin["load"],
                log=log,
            )
            db.reset_reviews()
            ceiling.append(
                Ceiling(
                    route=route.key, connections=connections, db_delay_ms=delay * 1000, **result
                )
            )
    return ceiling


def start_targets(stack, options, db, delay, progress, log_dir, stamp):
    """Every app of the run, started at once (an idle app costs memory, not CPU),
    each through a delay proxy of its own when delay (seconds) is not 0."""
    if options.target:
        return [targets.external(options)]
    started = []
    for app, deployment in targets.pairs(options):
        target = targets.new_target(app, deployment, delay)
        progress.step("start", f"start {target.label}")
        targets.start(stack, options, target, db.url, log_dir, stamp)
        started.append(target)
    return started


def wrk_load(target, route, connections, options):
    """wrk as measure_once's Load: it stops with up to one request per
    connection in flight, which the server may still have written."""

    def command(seconds):
        load = options.pin and options.pin["load"]
        return wrk.command(
            target.url, route, connections, options.threads, seconds, options.timeout, load
        )

    return Load(command, wrk.run, lambda result: connections)


def prime(measured, db, options, routes, progress, log):
    """One unmeasured run of every app on every route, before the first
    measured one (TechEmpower's primer): without it the first repeat read
    slower for whichever app came first after the starts (its ratios off by
    up to 70% where the later repeats agreed within 20%)."""
    if not options.warmup:
        return
    progress.step("primer", f"primer: every app, every route, {options.warmup}s each, not measured")
    for route in routes:
        for target in measured:
            args = wrk.command(
                target.url,
                route,
                options.connections[0],
                options.threads,
                options.warmup,
                options.timeout,
                options.pin and options.pin["load"],
            )
            wrk.run(args, log)
        db.settle_and_reset()


def measure_in_rotation(measured, db, options, routes, progress, log):
    """{(target label, route key, connections): [one report per repeat]}."""
    runs = {}
    turn = 0
    for repeat in range(options.repeat):
        for connections in options.connections:
            for route in routes:
                for place, target in enumerate(rotation(measured, turn)):
                    if not target.measurable:
                        continue  # failed in an earlier turn
                    label = f"{target.label} {route.label}, {connections} connections"
                    if options.repeat > 1:
                        label += f", run {repeat + 1}/{options.repeat}"
                    progress.step("run", label)
                    load = wrk_load(target, route, connections, options)
                    try:
                        result = measure_once(target, route, db, options, log, load)
                    except (wrk.WrkError, database.LostWrites) as error:
                        say(f"  {target.label} FAILED: {error}")
                        target.fail(f"{type(error).__name__}: {error}")
                        continue
                    result.update(turn=turn, place=place)
                    say(
                        f"    {result['requests_per_s']:,.0f} req/s, "
                        f"p99 {result['latency_ms']['p99']:.1f} ms"
                    )
                    runs.setdefault((target.label, route.key, connections), []).append(result)
                turn += 1
    return runs


def measurements(measured, runs, options, routes):
    """The results' measurements, per app, connection count and route."""
    rows = []
    for target in measured:
        if not target.measurable:
            continue
        for connections in options.connections:
            for route in routes:
                reports = runs.get((target.label, route.key, connections))
                if not reports:
                    continue  # not measured closed-loop (--rate with rates given)
                ledgers = [r["ledger"] for r in reports if "ledger" in r]
                ledger = None
                if ledgers:
                    ledger = {
                        key: sum(item[key] for item in ledgers)
                        for key in ("responses_2xx", "rows_added", "in_flight")
                    }
                rows.append(
                    Peak(
                        app=target.app,
                        deployment=target.deployment,
                        db_delay_ms=target.db_delay * 1000,
                        connections=connections,
                        route=route.key,
                        summary=wrk.summarize(reports),
                        runs=reports,
                        ledger=ledger,
                        ledgers=ledgers,
                    )
                )
    return rows


def results(options, db, ceiling, started, measured_rows, fixed=()):
    return Results(
        db_delays_ms=[delay * 1000 for delay in options.db_delays],
        command=options.command,
        environment=environment.capture(),
        database=db.settings,
        wrk={
            "threads": options.threads,
            "connections": options.connections,
            "duration_s": options.duration,
            "warmup_s": options.warmup,
            "timeout_s": options.timeout,
            "repeat": options.repeat,
            "routes": options.routes,
            "order": "rotation: every app started at once, measured in turn, the order "
            "rotating per repeat and route",
        },
        pinning=options.pin,
        pgbench=ceiling,
        delay_proxy=DELAY_PROXY if any(options.db_delays) else None,
        apps=[target.record for target in started],
        measurements=measured_rows,
        openloop=list(fixed),
        generator={
            "name": openloop.NAME,
            "version": openloop.version(),
            "rates": options.rates,
            "connections": max(options.connections),
        }
        if options.rates
        else None,
    )


def save(saved, base):
    """JSON, Markdown and PNG beside each other; the Markdown printed too."""
    paths = [base.with_suffix(".json"), base.with_suffix(".md")]
    paths[0].write_text(to_json(saved))
    text = markdown(saved)
    paths[1].write_text(text)
    try:
        extras.ensure(["matplotlib"], "the charts")
    except BenchmarkError as error:
        say(f"no charts this time: {error}")
        charts = []
    else:
        from bench.report import charts as chart  # matplotlib: installed just now if missing

        charts = [
            (chart.draw, ".png"),
            (chart.draw_latency, "-latency.png"),
            (chart.draw_matrix, "-matrix.png"),
            (chart.draw_sweep, "-sweep.png"),
        ]
    for draw, suffix in charts:
        path = base.parent / (base.name + suffix)
        if draw(saved, path):  # nothing measured, nothing drawn
            paths.append(path)
    say("\n" + text)
    for path in paths:
        say(f"saved {os.path.relpath(path)}")


DELAY_PROXY = (
    "--db-delay D: each app, and pgbench, reaches Postgres through a TCP proxy of its "
    "own (bench/stack/delay_proxy.py) that holds every chunk D/2 in each direction, so each "
    "round trip waits D more, as a database on another host would; 0 is direct, "
    "no proxy."
)


def measure_at(delay, options, db, routes, progress, log, results_dir, stamp):
    """Every step of a run with Postgres `delay` seconds away (0: direct):
    (ceiling, targets started, measurements, fixed-rate rows). The apps and
    proxies started here are stopped before the next delay's start."""
    if len(options.db_delays) > 1 or delay:
        say(f"database {delay * 1000:g} ms away" + (" (delay proxy)" if delay else " (direct)"))
    with contextlib.ExitStack() as stack:
        ceiling = []
        if options.pgbench and db.url:
            url = db.url
            if delay:
                pin = options.pin and options.pin["db"]
                url = stack.enter_context(Launched(db.url, delay, log, pin)).url
            ceiling = measure_ceiling(db, url, delay, options, routes, progress, log)
        started = start_targets(stack, options, db, delay, progress, results_dir, stamp)
        measured = targets.verified(started, routes, db.connection, db.reset_reviews)
        runs = {}
        if not closed_loop_skipped(options):
            prime(measured, db, options, routes, progress, log)
            runs = measure_in_rotation(measured, db, options, routes, progress, log)
        peaks = measurements(measured, runs, options, routes)
        fixed = []
        if options.rates:
            fixed = fixed_rate.measure_in_rotation(
                measured, peaks, db, options, routes, progress, log
            )
    return ceiling, started, peaks, fixed


def run(options):
    """Run the whole benchmark; returns the results as saved. Raises
    BenchmarkError when it cannot go on, or when an app was not measured."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    results_dir = ROOT / options.results_dir  # an absolute results_dir stays itself
    results_dir.mkdir(parents=True, exist_ok=True)
    routes = [ROUTES[key] for key in options.routes]
    if not options.target:
        extras.ensure(targets.packages_needed(options), "the servers of this run")
    if options.rates:
        extras.ensure(["hdrhistogram"], "the open-loop generator")
    progress = Progress(plan(options))
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(results_dir / f"{stamp}.log", "w"))
        db = stack.enter_context(opened_database(options))
        if options.pin and not options.target:
            stack.enter_context(pinned_database(options.pin["db"]))
        parts = ([], [], [], [])  # ceiling, targets started, measurements, fixed-rate rows
        for delay in options.db_delays:
            phase = measure_at(delay, options, db, routes, progress, log, results_dir, stamp)
            for part, rows in zip(parts, phase, strict=True):
                part.extend(rows)
        ceiling, started, peaks, fixed = parts
        saved = results(options, db, ceiling, started, peaks, fixed)
    save(saved, results_dir / f"{stamp}-{'-'.join(options.apps)}")
    failed = [target.record for target in started if target.record.status != "measured"]
    if failed:
        raise BenchmarkError("not measured: " + ", ".join(record.label for record in failed))
    return saved
