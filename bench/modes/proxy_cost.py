"""The proxy comparison (--proxy both): each app measured direct and behind
nginx (proxy/api.inc), side by side in the same rotation; the deployments
gain a "+nginx" twin (bench/stack/targets.py). Its section: what nginx costs."""

from bench.report.tables import delay_words, number, requests_cell, table
from bench.routes import ROUTES
from bench.stack.deployments import BEHIND_NGINX

CHARTS = []

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
    by_key = {
        (p.app, p.deployment, p.route, p.connections, p.db_delay_ms): p
        for p in results.measurements
    }
    rows = []
    for (app, deployment, route, connections, delay), direct in by_key.items():
        proxied = by_key.get((app, deployment + BEHIND_NGINX, route, connections, delay))
        if proxied:
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
