"""The pgbench ceiling: Postgres alone running each route's SQL
(bench/load/pgbench.py), one client per wrk connection as far as
max_connections allows: how far the apps are from what the database can do.
Its figures are columns of the peak's tables (bench/modes/peak.py), so it has
no section of its own.

Each pgbench run lasts SECONDS at most, shorter than the apps' runs: pgbench
holds its rate within a second (its tps at 1, 2, 3 and 5 s agree within their
run-to-run noise), and a ceiling as long as every app's run made it a quarter of
a first ./benchmark.sh APP. Each Ceiling records its own duration.

Each also records what a transaction costs in CPU: Postgres's, pgbench's and
the delay proxy's (bench/sut/cost.py), the floor under an app's
cpu_us_per_request: the same SQL with no app and no HTTP."""

import math

from bench.load import pgbench
from bench.modes.mode import Mode
from bench.progress import say
from bench.records import Ceiling
from bench.sut import cost
from bench.sut.database import SPARE_CONNECTIONS
from bench.sut.delay_proxy import Launched

SECONDS = 2


def seconds(runs):
    """How long each pgbench run lasts: SECONDS, or less if --duration is."""
    return min(runs.duration, SECONDS)


# Round trips pgbench takes to open one connection (startup, authentication,
# the settings Postgres reports), counted generously.
CONNECT_ROUND_TRIPS = 4


def with_connecting(seconds, clients, threads, delay):
    """pgbench's --time for `seconds` of load: its clock runs while each of its
    threads opens its connections one after another, which at a delay of
    20 ms per round trip takes 50 clients 4 s (a 1 s run of 100 clients
    processed no transaction); its tps leaves that time out."""
    per_thread = -(-clients // max(1, min(threads, clients)))
    return seconds + math.ceil(per_thread * CONNECT_ROUND_TRIPS * delay)


def plan(runs, routes):
    """(connections, route) of each pgbench run."""
    return [(connections, route) for connections in runs.connections for route in routes]


def measured(options):
    """Whether the run has a database of its own to measure (with --target,
    only with --database-url)."""
    return options.pgbench and bool(options.database_url or not options.target)


def steps(options, apps):
    """Its steps per database delay (once_per_outer), for Progress: one
    pgbench run each."""
    runs = len(plan(options.runs, options.routes)) if measured(options) else 0
    return {"ceiling": (runs, seconds(options.runs))}


def before_start(stage):
    """The Ceilings, measured before the apps start: at the database, or at
    a delay proxy of pgbench's own (stage.delay seconds per round trip)."""
    db = stage.context.db
    if not (measured(stage.options) and db.url) or not stage.first_of_outer:
        return {}
    url, parts = db.url, {"postgres": [db.postmaster]}
    if stage.delay:
        launched = Launched(db.url, stage.delay, stage.context.log, stage.options.sut.db_cpus)
        url = stage.exits.enter_context(launched).url
        parts["delay_proxy"] = [launched.process.pid]
    most = int(db.settings["max_connections"]) - SPARE_CONNECTIONS
    runs = stage.context.runs
    ceilings = []
    for connections, route in plan(runs, stage.routes):
        clients = min(connections, most)
        stage.progress.step("ceiling", f"pgbench {route.label} SQL, {clients} clients")
        try:
            with cost.Window(parts) as window:
                result = pgbench.run(
                    url,
                    route,
                    clients,
                    runs.threads,
                    with_connecting(seconds(runs), clients, runs.threads, stage.delay),
                    pin=runs.cpus,
                    log=stage.context.log,
                )
        except pgbench.PgbenchError as error:  # the ceiling is a column: the run goes on
            say(f"    no ceiling: {str(error).splitlines()[0]}")
            db.clear()
            continue
        used = window.accounting(result["transactions"] or 0)
        db.clear()
        ceilings.append(
            Ceiling(
                route=route.key,
                connections=connections,
                db_delay_ms=stage.delay * 1000,
                duration_s=seconds(runs),
                cpu=used,
                cpu_us_per_transaction=cost.per_request(used),
                **result,
            )
        )
    return {"pgbench": ceilings}


def section(results):
    return []


def options(group):
    group.add_argument(
        "--no-pgbench", dest="pgbench", action="store_false", help="skip the database ceiling"
    )


MODE = Mode(
    "ceiling",
    section,
    title="the database's ceiling",
    options=options,
    fields=(("pgbench", bool, True),),
    once_per_outer=True,  # the apps' conditions do not change the database's
    steps=steps,
    before_start=before_start,
)
