"""The chart a reader opens: req/s per route and app, and latency percentiles
per app, one row per deployment and connection count."""

# A Figure of its own rather than pyplot: no GUI backend, no global state.
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

from bench.modes.server_matrix import layout as matrix_layout
from bench.report.tables import delay_words, delays, sections
from bench.routes import ROUTES

PERCENTILES = ["p50", "p75", "p90", "p99", "p99.9"]


def saved(figure, results, path, rect=None):
    """Title the figure with the run (command, machine, date, commit), lay it
    out inside rect (room for the title) and write it as a PNG at path."""
    environment = results.environment
    figure.suptitle(
        f"{results.command}  |  {environment['cpu_count']} x {environment['cpu_model']}"
        f"  |  {environment['date']}  |  commit {(environment['git_commit'] or '?')[:10]}",
        fontsize=9,
    )
    figure.tight_layout(rect=rect)
    figure.savefig(path, dpi=110)
    return path


def colors(results):
    """One colour per app, the same in every panel."""
    apps = dict.fromkeys(app.app for app in results.apps)
    return {app: f"C{index}" for index, app in enumerate(apps)}


def requests_axes(axes, measurements, apps, routes, pgbench, color):
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
        bars = axes.bar(
            positions, heights, width, yerr=[low, high], capsize=3, label=app, color=color[app]
        )
        axes.bar_label(bars, fmt="{:,.0f}", fontsize=7)
    ceiling = {p.route: p.tps for p in pgbench}
    labels = [
        ROUTES[route].label + (f"\npgbench {ceiling[route]:,.0f} tps" if route in ceiling else "")
        for route in routes
    ]
    axes.set_xticks(range(len(routes)), labels, fontsize=8)
    axes.set_ylabel("requests/s (median, min-max)")
    axes.legend(fontsize=8)


def latency_axes(axes, measurements, apps, route, color):
    by_key = {(m.app, m.route): m.summary for m in measurements}
    for app in apps:
        summary = by_key.get((app, route))
        if summary:
            values = [summary.latency_ms[p] for p in PERCENTILES]
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
    routes = results.wrk["routes"]
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
    for axes_row, (deployment, connections, delay, measurements, pgbench, apps) in zip(
        grid, rows, strict=True
    ):
        requests_axes(axes_row[0], measurements, apps, routes, pgbench, color)
        axes_row[0].set_title(
            f"{deployment} deployment, {connections} connections{delay_words(delay, ', ')}"
        )
        for axes, route in zip(axes_row[1:], routes, strict=True):
            latency_axes(axes, measurements, apps, route, color)
    return saved(figure, results, path)


def log_ms(axes):
    """A log y axis labelled in plain milliseconds."""
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    axes.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    axes.tick_params(axis="y", which="minor", labelsize=7)


def spectrum_axes(axes, rows, color):
    """HdrHistogram's percentile plot: latency against 1/(1-p), log-log."""
    for row in rows:
        # From the median up: the tail is the question, and the lowest values
        # sit at the histogram's resolution.
        points = [(p, ms) for p, ms in row.report["spectrum"] if 50 <= p < 100]
        if points:
            x = [1 / (1 - p / 100) for p, _ in points]
            axes.plot(x, [ms for _, ms in points], label=row.app, color=color[row.app])
    axes.set_xscale("log")
    log_ms(axes)
    ticks = [(1 / (1 - p / 100), label) for p, label in SPECTRUM_TICKS]
    axes.set_xticks([x for x, _ in ticks], [label for _, label in ticks], fontsize=7)
    axes.set_xlabel("percentile", fontsize=8)
    axes.set_ylabel("ms from the due time (log scale)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)


def over_time_axes(axes, rows, color):
    """p99 of each second of the schedule: jitter and stalls."""
    for row in rows:
        series = [r for r in row.report["per_second"] if r["p99_ms"] is not None]
        axes.plot(
            [r["second"] for r in series],
            [r["p99_ms"] for r in series],
            marker=".",
            label=row.app,
            color=color[row.app],
        )
    log_ms(axes)
    axes.set_xlabel("second of the run", fontsize=8)
    axes.set_ylabel("p99 ms (log scale)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)


SPECTRUM_TICKS = [(50, "50%"), (90, "90%"), (99, "99%"), (99.9, "99.9%"), (99.99, "99.99%")]


def draw_latency(results, path):
    """The open-loop runs (--rate) as a PNG at path: per deployment and route,
    at the highest rate offered, the percentile spectrum and p99 over time."""
    fixed = results.openloop
    keys = list(dict.fromkeys((row.deployment, row.route) for row in fixed))
    if not keys:
        return None
    color = colors(results)
    figure = Figure(figsize=(13, 4 * len(keys)))
    grid = figure.subplots(len(keys), 2, squeeze=False)
    for (deployment, route), (left, right) in zip(keys, grid, strict=True):
        rows = [r for r in fixed if (r.deployment, r.route) == (deployment, route)]
        top = max(r.rate for r in rows)
        rows = [r for r in rows if r.rate == top]
        title = f"{deployment}: {ROUTES[route].label} at {top:,g} req/s"
        spectrum_axes(left, rows, color)
        left.set_title(f"{title}, latency by percentile", fontsize=9)
        over_time_axes(right, rows, color)
        right.set_title(f"{title}, p99 per second", fontsize=9)
    return saved(figure, results, path, (0, 0, 1, 1 - 0.3 / len(keys) / 4))


def grouped_bars(axes, groups, apps, values, color, log=False):
    """One group of bars per server, one bar per app: values[(app, group)]."""
    width = 0.8 / len(apps)
    for index, app in enumerate(apps):
        points = [(place, values.get((app, group))) for place, group in enumerate(groups)]
        points = [(place, height) for place, height in points if height is not None]
        if points:
            offset = (index - (len(apps) - 1) / 2) * width
            bars = axes.bar(
                [place + offset for place, _ in points],
                [height for _, height in points],
                width,
                label=app,
                color=color[app],
            )
            axes.bar_label(bars, fmt="{:,.0f}" if not log else "{:,.1f}", fontsize=6)
    axes.set_xticks(range(len(groups)), groups, fontsize=7, rotation=30, ha="right")
    if log:
        log_ms(axes)
    axes.grid(True, axis="y", which="both", alpha=0.3)
    axes.legend(fontsize=7)


def draw_matrix(results, path):
    """A server-matrix run (--server) as a PNG at path: per route, req/s of
    every pair (one group per server, one bar per app) at the first connection
    count, and with --rate the p99 at the one rate every pair was offered."""
    layout = matrix_layout(results)
    if not layout:
        return None
    servers, apps, _ = layout
    routes = results.wrk["routes"]
    connections = min(m.connections for m in results.measurements)
    fixed = results.openloop
    color = colors(results)
    columns = 2 if fixed else 1
    figure = Figure(figsize=(1.2 * len(servers) * columns + 2, 4.2 * len(routes)))
    grid = figure.subplots(len(routes), columns, squeeze=False)
    for axes, route in zip(grid, routes, strict=True):
        peak = {
            (m.app, m.deployment): m.summary.requests_per_s
            for m in results.measurements
            if (m.route, m.connections) == (route, connections)
        }
        grouped_bars(axes[0], servers, apps, peak, color)
        axes[0].set_title(
            f"{ROUTES[route].label}: peak req/s, {connections} connections", fontsize=9
        )
        axes[0].set_ylabel("requests/s")
        if fixed:
            rows = [r for r in fixed if r.route == route]
            p99 = {(r.app, r.deployment): (r.report["latency_ms"] or {}).get("p99") for r in rows}
            shown = ", ".join(f"{rate:,g}" for rate in sorted({r.rate for r in rows}))
            grouped_bars(axes[1], servers, apps, p99, color, log=True)
            axes[1].set_title(f"{ROUTES[route].label}: p99 at {shown} req/s offered", fontsize=9)
            axes[1].set_ylabel("p99 ms (log scale)")
    return saved(figure, results, path, (0, 0, 1, 1 - 0.3 / len(routes) / 4))


STYLES = ["-", "--", ":", "-."]


def sweep_axes(axes, lines, ticks, color, what):
    """lines: {(app, other value): {tick: y}}; x at evenly spaced ticks."""
    others = list(dict.fromkeys(other for _, other in lines))
    for (app, other), points in lines.items():
        xs = [index for index, tick in enumerate(ticks) if tick in points]
        axes.plot(
            xs,
            [points[ticks[index]] for index in xs],
            marker="o",
            color=color[app],
            linestyle=STYLES[others.index(other) % len(STYLES)],
            label=f"{app}, {other}" if len(others) > 1 else app,
        )
    axes.set_xticks(range(len(ticks)), [f"{tick:g}" for tick in ticks])
    log_ms(axes)  # the figures span orders of magnitude
    axes.set_ylabel("p99 ms (log scale)" if what == "p99" else "requests/s (log scale)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=6)


def draw_sweep(results, path):
    """A sweep of the database delay (--db-delay) or of the connections (-c)
    as a PNG at path: per deployment and route, req/s and p99 against each swept
    axis, one colour per app (and one line style per value of the other axis)."""
    measurements = results.measurements
    axes_swept = []  # (name shown, key of the x value, key of the other)
    if len(delays(results)) > 1:
        axes_swept.append(
            ("database delay, ms per round trip", lambda m: m.db_delay_ms, "connections")
        )
    if len({m.connections for m in measurements}) > 1:
        axes_swept.append(("wrk connections", lambda m: m.connections, "delay"))
    if not axes_swept:
        return None
    keys = list(dict.fromkeys((m.deployment, m.route) for m in measurements))
    color = colors(results)
    figure = Figure(figsize=(5 * 2 * len(axes_swept), 3.8 * len(keys)))
    grid = figure.subplots(len(keys), 2 * len(axes_swept), squeeze=False)
    for row, (deployment, route) in zip(grid, keys, strict=True):
        here = [m for m in measurements if (m.deployment, m.route) == (deployment, route)]
        for column, (name, x_of, other) in enumerate(axes_swept):
            ticks = sorted({x_of(m) for m in here})
            for offset, what in enumerate(("req/s", "p99")):
                lines = {}
                for m in here:
                    label = (
                        f"c={m.connections}" if other == "connections" else f"+{m.db_delay_ms:g} ms"
                    )
                    y = m.summary.requests_per_s if what == "req/s" else m.summary.latency_ms["p99"]
                    lines.setdefault((m.app, label), {})[x_of(m)] = y
                axes = row[2 * column + offset]
                sweep_axes(axes, lines, ticks, color, what)
                axes.set_xlabel(name, fontsize=8)
                axes.set_title(f"{deployment}: {ROUTES[route].label}, {what}", fontsize=9)
    return saved(figure, results, path, (0, 0, 1, 1 - 0.3 / len(keys) / 4))
