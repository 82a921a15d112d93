"""A server-matrix run (--server): which server serves each app best. A dot
plot, one row per server, one marker per app on it, so that fifteen servers
by four apps stay readable: peak req/s per route (at the first connection
count) and, with --rate, the p99 at the one rate every pair was offered."""

from bench.report.charts.common import color, figure, legend, log_axis, saved, styled
from bench.report.select import layout
from bench.routes import ROUTES

MARKERS = {"flask": "o", "quart": "s", "sanic": "^", "falcon": "D"}
ROW = 0.28  # inches per server


def dots(axes, servers, apps, values):
    """values[(app, server)] as one marker per app on each server's row,
    nudged apart vertically so that equal values stay visible."""
    for index, app in enumerate(apps):
        nudge = (index - (len(apps) - 1) / 2) * 0.15
        points = [
            (values[(app, server)], place + nudge)
            for place, server in enumerate(servers)
            if values.get((app, server)) is not None
        ]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, linestyle="none", marker=MARKERS.get(app, "o"), color=color(app))
    axes.set_yticks(range(len(servers)), servers)
    axes.set_ylim(len(servers) - 0.5, -0.5)  # the first server on top
    axes.grid(True, axis="x", which="both", alpha=0.3)
    axes.grid(True, axis="y", alpha=0.15)


@styled
def draw_matrix(results, path):
    """Write the matrix chart as a PNG at path; None unless several servers
    were measured side by side."""
    found = layout(results)
    if not found:
        return None
    servers, apps, _ = found
    routes = results.wrk["routes"]
    connections = min(m.connections for m in results.measurements)
    openloop = results.openloop
    rows = 2 if openloop else 1
    chart = figure(rows * (ROW * len(servers) + 0.9) + 1.2)
    grid = chart.subplots(rows, len(routes), squeeze=False, sharey=True)
    for column, route in enumerate(routes):
        peak = {
            (m.app, m.deployment): m.summary.requests_per_s
            for m in results.measurements
            if (m.route, m.connections) == (route, connections)
        }
        dots(grid[0][column], servers, apps, peak)
        grid[0][column].set_title(ROUTES[route].label)
        grid[0][column].set_xlim(left=0)
        grid[0][column].set_xlabel(f"peak req/s, {connections} connections")
        if openloop:
            here = [r for r in openloop if r.route == route]
            p99 = {(r.app, r.deployment): (r.report["latency_ms"] or {}).get("p99") for r in here}
            shown = ", ".join(f"{rate:,g}" for rate in sorted({r.rate for r in here}))
            dots(grid[1][column], servers, apps, p99)
            log_axis(grid[1][column], "x")
            grid[1][column].set_xlabel(f"p99 ms at {shown} req/s (log)")
    legend(chart, apps, markers=MARKERS)
    return saved(chart, results, path)
