"""The pgbench ceiling: Postgres alone running each route's SQL
(bench/load/pgbench.py), one client per wrk connection as far as
max_connections allows: how far the apps are from what the database can do.
Its figures are columns of the peak's tables (bench/modes/peak.py), so it has
no section of its own.

Each pgbench run lasts SECONDS at most, shorter than the apps' runs: pgbench
holds its rate within a second (its tps at 1, 2, 3 and 5 s agree within their
run-to-run noise), and a ceiling as long as every app's run made it a quarter of
a first ./benchmark.sh APP. Each Ceiling records its own duration."""

from bench.load import pgbench
from bench.records import Ceiling
from bench.stack.database import SPARE_CONNECTIONS

CHARTS = []
SECONDS = 2


def seconds(options):
    """How long each pgbench run lasts: SECONDS, or less if --duration is."""
    return min(options.duration, SECONDS)


def plan(options, routes):
    """(connections, route) of each pgbench run."""
    return [(connections, route) for connections in options.connections for route in routes]


def measure(db, url, delay, context, routes, progress):
    """The Ceilings at url: the database, or the delay proxy the apps reach it
    through (delay seconds per round trip)."""
    options = context.options
    most = int(db.settings["max_connections"]) - SPARE_CONNECTIONS
    ceilings = []
    for connections, route in plan(options, routes):
        clients = min(connections, most)
        progress.step("ceiling", f"pgbench {route.label} SQL, {clients} clients")
        pin = options.pin and options.pin["load"]
        duration = seconds(options)
        result = pgbench.run(
            url, route.key, clients, options.threads, duration, pin=pin, log=context.log
        )
        db.reset_reviews()
        ceilings.append(
            Ceiling(
                route=route.key,
                connections=connections,
                db_delay_ms=delay * 1000,
                duration_s=duration,
                **result,
            )
        )
    return ceilings


def section(results):
    return []
