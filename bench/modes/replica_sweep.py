"""The replica comparison (--replicas 1,2,4): each app measured as one server
and as N copies behind nginx sharing its budgets (bench/stack/replicas.py),
side by side in the same rotation; the deployments gain " xN" twins
(bench/stack/targets.py). Its section: req/s and p99 against the copies."""

from bench.report.tables import delay_words, requests_cell, table
from bench.routes import ROUTES
from bench.stack.deployments import base, replicas

CHARTS = []


def counts(results):
    """The replica counts the run measured, ascending."""
    return sorted({replicas(p.deployment) for p in results.measurements})


def section(results):
    """One row per app, deployment, route and connection count, one column
    per replica count: req/s and p99; [] when the run measured one count."""
    found = counts(results)
    if len(found) < 2:
        return []
    by_key = {}
    for p in results.measurements:
        key = (p.app, base(p.deployment), p.route, p.connections, p.db_delay_ms)
        by_key.setdefault(key, {})[replicas(p.deployment)] = p.summary
    rows = []
    for (app, deployment, route, connections, delay), summaries in by_key.items():
        cells = [
            f"{requests_cell(s)} / {s.latency_ms['p99']:.1f}" if (s := summaries.get(n)) else "-"
            for n in found
        ]
        label = f"{app} ({deployment})" + delay_words(delay, ", ")
        rows.append([label, ROUTES[route].label, str(connections), *cells])
    header = ["app", "route", "connections"] + [f"x{n}: req/s / p99 ms" for n in found]
    intro = (
        "N copies of each app's server behind nginx, sharing the app's worker processes "
        "and database connections (bench/stack/replicas.py); x1 is one server, "
        "behind nginx only if --proxy put it there."
    )
    return ["## Replicas: req/s and p99 against copies", "", intro, "", table(header, rows), ""]
