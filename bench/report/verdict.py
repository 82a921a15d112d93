"""The verdict's table, as README.md holds it: per database delay, each app's
capacity at the run's objective on each route, with its 95 % interval and
its ratio to Flask's (or "no measurable difference"), the CPU its own
processes spent per request at the closed-loop peak (Postgres runs the same
SQL for every app), its memory, and the run's
A/A noise floor; and, for a run with --overload, a line per app past its
capacity: its goodput at each multiple offered. Made from a run's JSON, so
that the front page quotes that run's cells and nothing else:

    python -m bench.report.verdict docs/results/RUN.json

README.md holds what it prints between `<!-- verdict: python -m
bench.report.verdict RUN.json -->` and `<!-- end verdict -->`;
tests/docs/test_claims.py makes it again and compares. A view of the
records: no mode imported."""

import sys

from bench import intervals
from bench.records import load
from bench.report.capacity import capacity_cell, floor_for
from bench.report.overload import curves
from bench.report.tables import delay_words, estimate_cell, number, table
from bench.routes import ROUTES


def shown(app):
    """An A/A arm as its app: flask#1 is Flask; flask#2 is the floor."""
    return app.split("#")[0]


def floor_of(results, route, delay):
    found = [
        floor
        for floor in results.noise_floor
        if floor["route"] == route and floor["db_delay_ms"] == delay
    ]
    return found[0] if found else None


def ratio_cell(results, app, route, delay):
    """Its capacity to the baseline's, in the words of bench/intervals.py."""
    for ratio in results.ratios:
        if (ratio["app"], ratio["route"], ratio["db_delay_ms"]) == (app, route, delay):
            return intervals.words(ratio, floor_for(results.noise_floor, ratio))
    return "1"  # the baseline itself


def row(results, app, delay, routes):
    capacities = {c.route: c for c in results.capacity if (c.app, c.db_delay_ms) == (app, delay)}
    peaks = {p.route: p for p in results.measurements if (p.app, p.db_delay_ms) == (app, delay)}
    cells = [f"{delay:g} ms", shown(app)]
    for route in routes:
        found = capacities.get(route)
        cells += [capacity_cell(found) if found else "-", ratio_cell(results, app, route, delay)]
    cpu = [
        number(peaks[route].cpu_us_per_request.get("app"))
        if route in peaks and peaks[route].cpu_us_per_request
        else "-"
        for route in routes
    ]
    ran = {c.configuration for c in capacities.values()}  # --tune's best: its configuration
    records = [a for a in results.apps if (a.app, a.db_delay_ms) == (app, delay)]
    rest = next((a.pss_rest_mib for a in records if ran == {None} or a.configuration in ran), None)
    ends = [p.pss_mib for p in peaks.values() if p.pss_mib]
    memory = f"{number(rest)} -> {number(max(ends))}" if rest and ends else "-"
    return [*cells, " / ".join(cpu), memory]


def verdict(results):
    """The table's Markdown, and below it the A/A floor of each delay."""
    routes = [
        route for route in results.wrk["routes"] if any(c.route == route for c in results.capacity)
    ]
    objective = results.objective or results.capacity[0].capacity_rps["objective"]
    at = f"p{objective['percentile']:g} <= {objective['ms']:g} ms"
    header = ["DB delay", "app"]
    for route in routes:
        header += [f"{route}: req/s at {at} (95 %)", "x flask"]
    header += [f"app CPU µs/req ({', '.join(routes)})", "PSS MiB"]
    apps = list(dict.fromkeys(c.app for c in results.capacity if not c.app.endswith("#2")))
    delays = sorted({c.db_delay_ms for c in results.capacity})
    rows = [row(results, app, delay, routes) for delay in delays for app in apps]
    lines = [table(header, rows), ""]
    for delay in delays:
        floors = [
            f"{route} {intervals.words(floor)}"
            for route in routes
            if (floor := floor_of(results, route, delay))
        ]
        if floors:
            lines.append(f"- A/A floor at {delay:g} ms (flask#2 / flask#1): {'; '.join(floors)}.")
    lines += overload_lines(results)
    return "\n".join(lines) + "\n"


def overload_lines(results):
    """Past capacity (--overload), per app, deployment, route and delay: the
    answers within the objective per second at each multiple of its capacity
    offered, and the refusals."""
    lines = []
    for (deployment, delay, route, *_), app, found in curves(results.overload):
        steps = [
            f"at {o.multiple:g}x, {estimate_cell(o.goodput_rps)} req/s within the objective "
            f"and {o.refused_rps:,.1f} refused"
            for o in found
        ]
        lines.append(
            f"- Past capacity, {shown(app)} ({deployment}, {ROUTES[route].label}"
            f"{delay_words(delay, ', ')}; capacity {found[0].capacity_rps:,.0f} req/s): "
            + "; ".join(steps)
            + "."
        )
    return lines


if __name__ == "__main__":
    sys.stdout.write(verdict(load(sys.argv[1])))
