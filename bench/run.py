"""One benchmark run, as a list of steps (see run()): install what it needs,
open the database, then per stage (a condition of every mode's sweep: per
database delay, and for the ratings route per upstream delay and fan-out:
stages()): measure its ceiling, start every app, verify each, measure the
modes' steps in rotation (bench/rotation.py); save the records and the
modes' sections.
Everything started is stopped on the way out, whatever happens, by one
ExitStack."""

import contextlib
import datetime
import os
import subprocess
from dataclasses import dataclass

import psycopg2

from bench import folder, modes
from bench.errors import BenchmarkError
from bench.load import wrk
from bench.modes import MEASURING, SWEEPING, charts, report
from bench.plan import plan
from bench.progress import Progress, say
from bench.records import Results, to_json
from bench.report import explorer
from bench.rotation import Context, Stage, Sweeping, add
from bench.routes import ROUTES
from bench.sut import database, environment, extras, memory, run_film, targets
from bench.sut.budget import DEFAULT_CONNECTIONS, fitting
from bench.sut.database import SPARE_CONNECTIONS
from bench.sut.lineup import connections_needed, lineup, packages_needed
from bench.sut.processes import pinned_database
from db import roles
from infra import ROOT
from tools.serve import database as sample_database

EMBEDDED_DATABASE = "benchmark"  # the throwaway server's database for the benchmark


@dataclass
class Database:
    """The run's database: its URL, an autocommit connection, its settings,
    each app's connection budget, and the run's film, whose reviews are the
    only rows the run writes or deletes (bench/sut/run_film.py); all
    None/empty when a --target's database is not given. owned: the run
    started it (the throwaway server), so it may also VACUUM review."""

    url: str | None = None
    connection: object = None
    settings: dict | None = None
    budget: int | None = None  # connections each app may hold (--db-connections)
    film: int | None = None
    owned: bool = False
    postmaster: int | None = None  # its server's process, when on this machine (its CPU)
    app_url: str | None = None  # the apps' (films_app's on the embedded Postgres)

    def count(self, settle=True):
        """The run's reviews, once the requests still in flight have landed
        (settle: some may be; without, none is)."""
        if not settle:
            return run_film.count(self.connection, self.film)
        return run_film.settled_count(self.connection, self.film)

    def clear(self, settle=False):
        """Delete the run's reviews (settle: once those in flight have landed),
        so that every POST run starts from the same table."""
        if self.film is None:
            return
        if settle:
            self.count()
        run_film.remove_reviews(self.connection, self.film)
        if self.owned:
            run_film.vacuum(self.connection)


def fitted(sut, slots, connection):
    """The lineup under the budget a Postgres of the user's has room for: an
    unasked budget is lowered until every app started at once fits in what it
    accepts beside its other clients."""
    asked = sut.db_connections
    free = database.free_connections(connection) - SPARE_CONNECTIONS
    budget = fitting(free, len(slots), asked)
    if budget is None:
        raise BenchmarkError(
            f"Postgres accepts {free + SPARE_CONNECTIONS} more connections (max_connections "
            f"less its reserved and open ones); {len(slots)} apps started at once with {asked} "
            f"each, + {SPARE_CONNECTIONS} spare, do not fit. Lower --db-connections or run "
            "fewer apps at once."
        )
    if budget == (asked or DEFAULT_CONNECTIONS):
        return slots
    say(f"each app gets {budget} database connections: all Postgres has room for")
    return lineup(sut, budget)


@contextlib.contextmanager
def opened_database(options, stamp, slots):
    """Yield the Database and the lineup: --database-url / DATABASE_URL, else
    the embedded Postgres (started with room for every slot's pools, and
    stopped, here), with the run's film in it (removed, with its reviews,
    here); the lineup fitted to a Postgres of the user's."""
    if options.target and not options.database_url:
        say("no --database-url with --target: the reads only, and no pgbench ceiling")
        yield Database(), slots
        return
    with contextlib.ExitStack() as cleanup:
        try:
            url = options.database_url
            if not options.target:  # the target's database is its own: not loaded here
                needed = connections_needed(slots) + SPARE_CONNECTIONS
                url = cleanup.enter_context(
                    sample_database(EMBEDDED_DATABASE, url, max_connections=max(needed, 100))
                )
            app_url = url
            if not options.database_url:  # the embedded one's roles (db/roles.sql)
                url, app_url = roles.bench_url(url), roles.app_url(url)
            connection = database.connect(url)
        except subprocess.CalledProcessError as error:
            raise BenchmarkError(f"the embedded Postgres did not start: {error}") from None
        except psycopg2.OperationalError as error:
            raise BenchmarkError(f"database unreachable: {str(error).strip()}") from None
        except psycopg2.Error as error:
            raise BenchmarkError(f"database unusable: {str(error).strip()}") from None
        cleanup.callback(connection.close)
        settings = database.server_settings(connection)
        if options.database_url and not options.target:  # the embedded one has room for all
            slots = fitted(options.sut, slots, connection)
        budget = slots[0].connections if slots else None
        film = None
        if any(ROUTES[key].writes for key in options.routes):  # reads need no film
            film = cleanup.enter_context(run_film.held(connection, f"benchmark run {stamp}", say))
        owned = not options.database_url
        server = database.postmaster(connection)
        yield Database(url, connection, settings, budget, film, owned, server, app_url), slots


def start_targets(stage, slots, db, log_dir, stamp):
    """Every slot of the lineup, started at once (an idle app costs memory, not
    CPU), each through a delay proxy of its own when the stage's delay is not 0."""
    sut = stage.options.sut
    if sut.target:
        return [targets.external(sut)]
    started = []
    for slot in slots:
        target = targets.new_target(slot, stage.delay, stage.fan_out)
        stage.progress.step("start", f"start {target.label}")
        targets.start(stage.exits, sut, target, db.app_url, log_dir, stamp)
        started.append(target)
    return started


def results(options, db, started, gathered):
    """The run's Results: what was asked, what ran, every record the modes gathered."""
    runs = options.runs
    return Results(
        command=options.command,
        environment=environment.capture(wrk.version()),
        database=db.settings,
        wrk={
            "threads": runs.threads,
            "connections": runs.connections,
            "duration_s": runs.duration,
            "warmup_s": runs.warmup,
            "timeout_s": runs.timeout,
            "repeat": runs.repeat,
            "routes": options.routes,
            "order": "rotation: every app started at once, measured in turn, the order "
            "rotating per repeat and route",
        },
        pinning=options.pinning,
        apps=[target.record for target in started],
        **modes.recorded(options),
        **gathered,
    )


def save(saved, base):
    """JSON, Markdown, the explorer's page and the modes' charts beside each
    other; the Markdown printed too."""
    paths = [base.with_suffix(".json"), base.with_suffix(".md")]
    paths[0].write_text(to_json(saved))
    text = report(saved)
    paths[1].write_text(text)
    paths.append(explorer.write(saved, base.parent / "index.html", base.name))  # its explorer
    try:
        extras.ensure(["matplotlib"], "the charts")
    except BenchmarkError as error:
        say(f"no charts this time: {error}")
    else:
        from bench.report.charts import drawn  # matplotlib: installed just now if missing

        paths += drawn(saved, base, charts())
    say("\n" + text)
    for path in paths:
        say(f"saved {os.path.relpath(path)}")


def measure_at(stage, slots, gathered, results_dir, stamp):
    """Every mode's steps at the stage's condition, their records added to
    gathered; returns the targets started. The apps and proxies started here
    are stopped before the next stage's start."""
    for mode in MEASURING:
        add(gathered, mode.before_start(stage))
    started = start_targets(stage, slots, stage.context.db, results_dir, stamp)
    stage.measured = targets.verified(started, stage.routes, stage.context.db, stage.context.runs)
    for target in stage.measured:  # at rest: every app started, verified, not yet loaded
        target.record.pss_rest_mib = memory.pss_mib(*target.pids)
    for mode in MEASURING:
        add(gathered, mode.measure_apps(stage, gathered))
    targets.read_back_all(stage.measured)
    return started


def stages(options, routes, context, sweeping):
    """Every Stage of the run, in order, each with the ExitStack that stops
    what its modes start: one per condition of every mode's sweep, nested,
    the outermost first (modes.SWEEPING: the database's delay, then the
    ratings route's sources); first_of_outer on the first of each condition
    of the outermost. Close it to stop what is still running."""
    outer, *inner = SWEEPING
    for condition in outer.sweep(options, sweeping):
        with contextlib.closing(nested(inner, options, sweeping, condition)) as combinations:
            for index, fields in enumerate(combinations):
                with contextlib.ExitStack() as phase:
                    yield Stage(
                        options,
                        routes,
                        context,
                        sweeping.progress,
                        exits=phase,
                        first_of_outer=index == 0,
                        **fields,
                    )


def nested(sweeps, options, sweeping, fields):
    """Every combination of the sweeps' conditions with fields, in order,
    each yielded inside what its sweeps started for it."""
    if not sweeps:
        yield fields
        return
    with contextlib.closing(sweeps[0].sweep(options, sweeping)) as conditions:
        for condition in conditions:
            yield from nested(sweeps[1:], options, sweeping, {**fields, **condition})


def run(options, slots):
    """Run the whole benchmark on the lineup `slots` (bench/sut/lineup.py;
    [] with --target); returns the results as saved. Raises BenchmarkError
    when it cannot go on, or when an app was not measured."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    # An absolute results_dir stays itself; the run's folder is its alone.
    results_dir = folder.made(ROOT / options.results_dir, f"{stamp}-{'-'.join(options.sut.apps)}")
    if slots:
        extras.ensure(packages_needed(slots), "the servers of this run")
    for mode in modes.MODES:
        extras.ensure(mode.extras(options), mode.title)
    progress = Progress(plan(options, len(slots) or 1))
    started, gathered, stopped = [], {}, None
    with contextlib.ExitStack() as cleanup:
        log = cleanup.enter_context(open(results_dir / f"{results_dir.name}.log", "w"))
        db, slots = cleanup.enter_context(opened_database(options, stamp, slots))
        if options.sut.db_cpus and not options.target:
            cleanup.enter_context(pinned_database(options.sut.db_cpus))
        routes = [ROUTES[key].writing_to(db.film) for key in options.routes]
        context = Context(db, options.runs, log)
        sweeping = Sweeping(progress, str(results_dir / stamp), gathered)
        try:
            with contextlib.closing(stages(options, routes, context, sweeping)) as every:
                for stage in every:
                    started += measure_at(stage, slots, gathered, results_dir, stamp)
        except BenchmarkError as error:
            if not gathered:  # nothing measured: nothing to save
                raise
            stopped = str(error)  # what was measured before is saved, and says so
        saved = results(options, db, started, gathered)
        saved.stopped = stopped
    save(saved, results_dir / results_dir.name)
    if stopped:
        raise BenchmarkError(f"{stopped}\n(what was measured before is saved: {results_dir})")
    failed = [target.record for target in started if target.record.status != "measured"]
    if failed:
        raise BenchmarkError("not measured: " + ", ".join(record.label for record in failed))
    return saved
