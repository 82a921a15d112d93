"""Latency at a fixed load (--rate): every app offered the same request rates
by the open-loop generator (bench/load/openloop), measured in rotation as the
closed-loop runs are. Requests leave on a schedule whether or not earlier ones
have returned, so a stall shows in the tail; the POST runs keep the
nothing-lost books.

--rate auto offers fractions of the *slowest* app's closed-loop peak on each
route (per deployment), so that the apps are compared at equal offered load.
In a server matrix (--server with several servers) it offers every pair one
rate per route, as the write-up this reproduces did (550 req/s for all): 75%
of the slowest sane pair's peak, sane meaning without errors and not the
floor (wsgiref), so that the rate is one every real server should keep.
"""

from bench.load import openloop
from bench.load.measure import Load, measure_once
from bench.records import Rate
from bench.stack import database
from bench.stack.servers import SERVERS, is_server
from bench.stack.targets import rotation

MATRIX_FRACTION = 0.75


def is_matrix(options):
    """Several servers measured side by side (--server), not deployments."""
    return len(options.deployments) > 1 and all(map(is_server, options.deployments))


def sane(peak):
    summary = peak.summary
    server = SERVERS.get(peak.deployment)
    errors = summary.socket_errors or summary.non_2xx
    return not errors and not (server and server.floor)


def rates_for(options, measurements, deployment, route):
    """The rates offered on route in deployment: --rate's, or auto's."""
    if options.rates != "auto":
        return options.rates
    matrix = is_matrix(options)
    peaks = [
        m.summary.requests_per_s
        for m in measurements
        if (m.route, m.connections) == (route.key, options.connections[0])
        and (sane(m) if matrix else m.deployment == deployment)
    ]
    return openloop.auto_rates(peaks, (MATRIX_FRACTION,) if matrix else openloop.AUTO_FRACTIONS)


def openloop_load(target, route, rate, options):
    """The open-loop generator as measure_once's Load: a request that timed out
    or broke after it was sent may have been written."""

    def command(seconds):
        return openloop.command(
            target.url.rstrip("/") + route.path,
            rate,
            max(options.connections),
            seconds,
            route.method,
            route.body.decode() if route.body else None,
            options.timeout,
            options.pin and options.pin["load"],
        )

    def unanswered(result):
        return result["errors"]["timeout"] + result["errors"]["socket"]

    return Load(command, openloop.run, unanswered)


def measure_in_rotation(measured, measurements, db, options, routes, progress, log):
    """[{app, deployment, route, rate, report}], every app at every rate."""
    rows, turn = [], 0
    for route in routes:
        offered = {
            target.deployment: rates_for(options, measurements, target.deployment, route)
            for target in measured
        }
        for index in range(max(len(rates) for rates in offered.values())):
            for target in rotation(measured, turn):
                rates = offered[target.deployment]
                if not target.measurable or index >= len(rates):
                    continue
                rate = rates[index]
                progress.step("rate", f"{target.label} {route.label} at {rate:g} req/s")
                load = openloop_load(target, route, rate, options)
                try:
                    result = measure_once(target, route, db, options, log, load)
                except (openloop.OpenLoopError, database.LostWrites) as error:
                    print(f"  {target.label} FAILED: {error}", flush=True)
                    target.fail(f"{type(error).__name__}: {error}")
                    continue
                latency = result["latency_ms"] or {}
                print(
                    f"    achieved {result['achieved_rate']:,.0f} req/s, "
                    f"{result['success_rate']:.1%} 2xx, p99 {latency.get('p99', 0):,.1f} ms",
                    flush=True,
                )
                rows.append(
                    Rate(
                        app=target.app,
                        deployment=target.deployment,
                        db_delay_ms=target.db_delay * 1000,
                        route=route.key,
                        rate=rate,
                        report=result,
                    )
                )
            turn += 1
    kept = {(t.app, t.deployment) for t in measured if t.measurable}
    return [row for row in rows if (row.app, row.deployment) in kept]
