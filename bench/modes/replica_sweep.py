"""The replica comparison (--replicas 1,2,4): each app measured as one server
and as N copies behind nginx sharing its budgets (bench/sut/replicas.py),
side by side in the same rotation; the deployments gain twins in N copies
(bench/sut/lineup.py). Its section: req/s and p99 against the copies."""

from bench.modes.mode import Mode
from bench.report.tables import delay_words, requests_cell, table
from bench.routes import ROUTES


def counts(results):
    """The replica counts the run measured, ascending."""
    return sorted({app.replicas for app in results.apps})


def section(results):
    """One row per app, deployment, route and connection count, one column
    per replica count: req/s and p99; [] when the run measured one count."""
    found = counts(results)
    if len(found) < 2:
        return []
    ran = {(a.app, a.deployment, a.db_delay_ms): a for a in results.apps}
    by_key = {}
    for p in results.measurements:
        app = ran[(p.app, p.deployment, p.db_delay_ms)]
        key = (p.app, app.configuration, p.route, p.connections, p.db_delay_ms)
        by_key.setdefault(key, {})[app.replicas] = p.summary
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
        "and database connections (bench/sut/replicas.py); x1 is one server, "
        "behind nginx only if --proxy put it there."
    )
    return ["## Replicas: req/s and p99 against copies", "", intro, "", table(header, rows), ""]


MODE = Mode(
    "replica_sweep",
    section,
)
