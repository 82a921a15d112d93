"""The proxy comparison (--proxy both): each app measured direct and behind
nginx (proxy/api.inc), side by side in the same rotation; the deployments
gain a twin with nginx in front (bench/sut/lineup.py). Its section: what
nginx costs."""

from bench.modes.mode import Mode
from bench.report.tables import delay_words, number, requests_cell, table
from bench.routes import ROUTES

HEADER = [
    "app",
    "route",
    "connections",
    "direct req/s",
    "behind nginx req/s",
    "nginx/direct",
    "p99 ms direct / nginx",
]


def section(results):
    """Each app direct and behind nginx, side by side; [] without such pairs."""
    ran = {(a.app, a.deployment, a.db_delay_ms): a for a in results.apps}
    by_key = {}
    for p in results.measurements:
        app = ran.get((p.app, p.deployment, p.db_delay_ms))
        if app and app.replicas == 1:
            key = (p.app, app.configuration, p.route, p.connections, p.db_delay_ms, app.nginx)
            by_key[key] = p
    rows = []
    for (app, deployment, route, connections, delay, nginx), direct in by_key.items():
        proxied = by_key.get((app, deployment, route, connections, delay, True))
        if not nginx and proxied:
            a, b = direct.summary, proxied.summary
            rows.append(
                [
                    f"{app} ({deployment})" + delay_words(delay, ", "),
                    ROUTES[route].label,
                    str(connections),
                    requests_cell(a),
                    requests_cell(b),
                    number(b.requests_per_s / a.requests_per_s, "{:.2f}x"),
                    f"{a.latency_ms['p99']:.1f} / {b.latency_ms['p99']:.1f}",
                ]
            )
    if not rows:
        return []
    return ["## What nginx in front costs", "", table(HEADER, rows), ""]


MODE = Mode(
    "proxy_cost",
    section,
)
