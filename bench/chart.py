"""The chart a reader opens: req/s per route and app, and latency percentiles
per app, one row per deployment and connection count."""

# A Figure of its own rather than pyplot: no GUI backend, no global state.
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from .report import sections
from .routes import ROUTES

PERCENTILES = ["p50", "p75", "p90", "p99", "p99.9"]


def colors(results):
    """One colour per app, the same in every panel."""
    apps = dict.fromkeys(app["app"] for app in results["apps"])
    return {app: f"C{index}" for index, app in enumerate(apps)}


def requests_axes(axes, measurements, apps, routes, pgbench, color):
    by_key = {(m["app"], m["route"]): m["summary"] for m in measurements}
    width = 0.8 / len(apps)
    for index, app in enumerate(apps):
        positions, heights, low, high = [], [], [], []
        for place, route in enumerate(routes):
            summary = by_key.get((app, route))
            if summary:
                positions.append(place + (index - (len(apps) - 1) / 2) * width)
                heights.append(summary["requests_per_s"])
                low.append(summary["requests_per_s"] - summary["requests_per_s_min"])
                high.append(summary["requests_per_s_max"] - summary["requests_per_s"])
        bars = axes.bar(
            positions, heights, width, yerr=[low, high], capsize=3, label=app, color=color[app]
        )
        axes.bar_label(bars, fmt="{:,.0f}", fontsize=7)
    ceiling = {p["route"]: p["tps"] for p in pgbench}
    labels = [
        ROUTES[route].label + (f"\npgbench {ceiling[route]:,.0f} tps" if route in ceiling else "")
        for route in routes
    ]
    axes.set_xticks(range(len(routes)), labels, fontsize=8)
    axes.set_ylabel("requests/s (median, min-max)")
    axes.legend(fontsize=8)


def latency_axes(axes, measurements, apps, route, color):
    by_key = {(m["app"], m["route"]): m["summary"] for m in measurements}
    for app in apps:
        summary = by_key.get((app, route))
        if summary:
            values = [summary["latency_ms"][p] for p in PERCENTILES]
            axes.plot(PERCENTILES, values, marker="o", label=app, color=color[app])
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    axes.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    axes.tick_params(axis="y", which="minor", labelsize=7)
    axes.set_title(f"{ROUTES[route].label} latency", fontsize=9)
    axes.set_ylabel("ms (log scale)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)


def draw(results, path):
    """Write the chart as a PNG at path."""
    routes = results["wrk"]["routes"]
    rows = list(sections(results))
    color = colors(results)
    if not rows:
        return None
    figure = Figure(figsize=(6 + 4 * len(routes), 4.5 * len(rows)))
    grid = figure.subplots(
        len(rows),
        1 + len(routes),
        squeeze=False,
        gridspec_kw={"width_ratios": [2] + [1] * len(routes)},
    )
    for axes_row, (deployment, connections, measurements, pgbench, apps) in zip(
        grid, rows, strict=True
    ):
        requests_axes(axes_row[0], measurements, apps, routes, pgbench, color)
        axes_row[0].set_title(f"{deployment} deployment, {connections} connections")
        for axes, route in zip(axes_row[1:], routes, strict=True):
            latency_axes(axes, measurements, apps, route, color)
    environment = results["environment"]
    figure.suptitle(
        f"{results['command']}  |  {environment['cpu_count']} x {environment['cpu_model']}"
        f"  |  {environment['date']}  |  commit {(environment['git_commit'] or '?')[:10]}",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path
