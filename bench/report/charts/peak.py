"""The chart a reader opens first (the closed-loop peak): per section of the
report (deployment, connections, delay), req/s per route and app in bars, and
under them each route's latency percentiles per app."""

from bench.report.charts.common import apps_of, color, figure, legend, log_axis, saved, styled
from bench.report.tables import condition_words, delay_words, sections
from bench.routes import ROUTES

PERCENTILES = ["p50", "p75", "p90", "p99", "p99.9"]


def requests_axes(axes, measurements, apps, routes, pgbench):
    """Grouped bars, median req/s with the min-max of the repeats; the
    pgbench ceiling of each route under its name."""
    by_key = {(m.app, m.route): m.summary for m in measurements}
    width = 0.8 / len(apps)
    for index, app in enumerate(apps):
        positions, heights, low, high = [], [], [], []
        for place, route in enumerate(routes):
            summary = by_key.get((app, route))
            if summary:
                positions.append(place + (index - (len(apps) - 1) / 2) * width)
                heights.append(summary.requests_per_s)
                low.append(summary.requests_per_s - summary.requests_per_s_min)
                high.append(summary.requests_per_s_max - summary.requests_per_s)
        bars = axes.bar(positions, heights, width, yerr=[low, high], capsize=3, color=color(app))
        axes.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ceiling = {p.route: p.tps for p in pgbench}
    labels = [
        ROUTES[route].label + (f"\npgbench {ceiling[route]:,.0f} tps" if route in ceiling else "")
        for route in routes
    ]
    axes.set_xticks(range(len(routes)), labels)
    axes.set_ylabel("requests/s\n(median, min-max)")
    axes.grid(True, axis="y", alpha=0.3)


def latency_axes(axes, measurements, apps, route):
    """One route's latency percentiles, one line per app, log scale."""
    by_key = {(m.app, m.route): m.summary for m in measurements}
    for app in apps:
        summary = by_key.get((app, route))
        if summary:
            values = [summary.latency_ms[p] for p in PERCENTILES]
            axes.plot(PERCENTILES, values, marker="o", color=color(app))
    log_axis(axes)
    axes.set_title(f"{ROUTES[route].label} latency", fontsize=9)
    axes.grid(True, which="both", alpha=0.3)


@styled
def draw(results, path):
    """Write the chart as a PNG at path; None when nothing was measured."""
    routes = results.wrk["routes"]
    rows = list(sections(results))
    if not rows:
        return None
    chart = figure(6.2 * len(rows))
    places = chart.subfigures(len(rows), 1, squeeze=False)[:, 0]
    for place, (deployment, connections, delay, measurements, pgbench, apps) in zip(
        places, rows, strict=True
    ):
        top, bottom = place.subfigures(2, 1, height_ratios=[1.2, 1])
        apps = [app for app in apps_of(results) if app in apps]  # the legend's order
        requests_axes(top.subplots(), measurements, apps, routes, pgbench)
        top.suptitle(
            f"{deployment} deployment, {connections} connections{delay_words(delay, ', ')}"
            + condition_words(measurements[0], ", "),
            fontsize=11,
            fontweight="bold",
        )
        panels = bottom.subplots(1, len(routes), squeeze=False)[0]
        for axes, route in zip(panels, routes, strict=True):
            latency_axes(axes, measurements, apps, route)
        panels[0].set_ylabel("ms (log scale)")
    legend(chart, apps_of(results))
    return saved(chart, results, path)
