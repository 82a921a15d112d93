"""A sweep (--db-delay D,... or -c N,...): how req/s and p99 move along the
swept axis. One x axis only: the database delay when several were measured
(the connection counts then become line styles), else the connections. One
column per route, one row per deployment and figure; one colour per app."""

from bench.report.charts.common import (
    STYLES,
    apps_of,
    color,
    figure,
    legend,
    log_axis,
    saved,
    styled,
)
from bench.report.tables import delays
from bench.routes import ROUTES

METRICS = [
    ("req/s (log)", lambda m: m.summary.requests_per_s),
    ("p99 ms (log)", lambda m: m.summary.latency_ms["p99"]),
]


def axes_of(results):
    """(x label, x of a measurement, line style key of a measurement, the
    style legend's words for a key): the delay when swept, else connections;
    None when nothing was swept."""
    if len(delays(results)) > 1:
        return (
            "database delay, ms per round trip",
            lambda m: m.db_delay_ms,
            lambda m: m.connections,
            "{} connections",
        )
    if len({m.connections for m in results.measurements}) > 1:
        return ("wrk connections", lambda m: m.connections, lambda m: None, "")
    return None


def sweep_axes(axes, here, ticks, x_of, style_of, styles, value):
    """One line per app and style key: value(measurement) at each tick it has."""
    lines = {}
    for m in here:
        lines.setdefault((m.app, style_of(m)), []).append(m)
    for (app, key), measured in lines.items():
        measured.sort(key=x_of)
        axes.plot(
            [ticks.index(x_of(m)) for m in measured],
            [value(m) for m in measured],
            marker="o",
            markersize=4,
            color=color(app),
            linestyle=styles.get(key, "-"),
        )


@styled
def draw_sweep(results, path):
    """Write the sweep chart as a PNG at path; None when nothing was swept."""
    found = axes_of(results)
    if not found:
        return None
    name, x_of, style_of, words = found
    measurements = results.measurements
    routes = results.wrk["routes"]
    deployments = list(dict.fromkeys(m.deployment for m in measurements))
    keys = sorted({style_of(m) for m in measurements}, key=lambda key: key or 0)
    styles = {key: STYLES[index % len(STYLES)] for index, key in enumerate(keys)}
    ticks = sorted({x_of(m) for m in measurements})
    rows = [(deployment, metric) for deployment in deployments for metric in METRICS]
    chart = figure(3.2 * len(rows) + 1.2)
    grid = chart.subplots(len(rows), len(routes), squeeze=False, sharex=True)
    for row, (deployment, (label, value)) in zip(grid, rows, strict=True):
        for axes, route in zip(row, routes, strict=True):
            here = [m for m in measurements if (m.deployment, m.route) == (deployment, route)]
            sweep_axes(axes, here, ticks, x_of, style_of, styles, value)
            log_axis(axes)
            axes.grid(True, which="both", alpha=0.3)
        row[0].set_ylabel(f"{deployment}: {label}")
    for axes, route in zip(grid[0], routes, strict=True):
        axes.set_title(ROUTES[route].label)
    for axes in grid[-1]:
        axes.set_xticks(range(len(ticks)), [f"{tick:g}" for tick in ticks])
        axes.set_xlabel(name)
    shown = {words.format(key): style for key, style in styles.items()} if words else None
    legend(chart, apps_of(results), shown)
    return saved(chart, results, path)
