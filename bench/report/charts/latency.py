"""The open-loop runs (--rate): per deployment and route, at the highest rate
offered, how the tail looks. Left, HdrHistogram's percentile plot (latency
against 1/(1-p), log-log); right, the p99 of each second of the schedule,
where jitter and stalls show."""

from matplotlib.ticker import MaxNLocator

from bench.report.charts.common import apps_of, color, figure, legend, log_axis, saved, styled
from bench.routes import ROUTES

SPECTRUM_TICKS = [(50, "50%"), (90, "90%"), (99, "99%"), (99.9, "99.9%"), (99.99, "99.99%")]


def spectrum_axes(axes, rows):
    """Latency from the due time against the percentile, from the median up:
    the tail is the question, and the lowest values sit at the histogram's
    resolution."""
    for row in rows:
        points = [(p, ms) for p, ms in row.report["spectrum"] if 50 <= p < 100]
        if points:
            x = [1 / (1 - p / 100) for p, _ in points]
            axes.plot(x, [ms for _, ms in points], color=color(row.app))
    axes.set_xscale("log")
    log_axis(axes)
    ticks = [(1 / (1 - p / 100), label) for p, label in SPECTRUM_TICKS]
    axes.set_xticks([x for x, _ in ticks], [label for _, label in ticks])
    axes.minorticks_off()
    axes.grid(True, which="both", alpha=0.3)


def over_time_axes(axes, rows):
    """p99 of each second of the schedule, one line per app."""
    for row in rows:
        series = [r for r in row.report["per_second"] if r["p99_ms"] is not None]
        axes.plot(
            [r["second"] for r in series],
            [r["p99_ms"] for r in series],
            marker=".",
            color=color(row.app),
        )
    log_axis(axes)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(True, which="both", alpha=0.3)


@styled
def draw_latency(results, path):
    """Write the chart as a PNG at path; None without open-loop runs."""
    openloop = results.openloop
    keys = list(dict.fromkeys((row.deployment, row.route) for row in openloop))
    deployments = list(dict.fromkeys(deployment for deployment, _ in keys))
    routes = results.wrk["routes"]
    keys.sort(key=lambda key: (routes.index(key[1]), deployments.index(key[0])))
    if not keys:
        return None
    chart = figure(2.9 * len(keys) + 1.2)
    grid = chart.subplots(len(keys), 2, squeeze=False)
    for (deployment, route), (left, right) in zip(keys, grid, strict=True):
        rows = [r for r in openloop if (r.deployment, r.route) == (deployment, route)]
        top = max(r.rate for r in rows)
        rows = [r for r in rows if r.rate == top]
        spectrum_axes(left, rows)
        over_time_axes(right, rows)
        left.set_ylabel(f"{deployment}\n{ROUTES[route].label}\nat {top:,g} req/s", fontsize=9)
        right.set_ylabel("p99 ms (log)")
    grid[0][0].set_title("ms from the due time, by percentile (log)")
    grid[0][1].set_title("p99 of each second")
    grid[-1][0].set_xlabel("percentile")
    grid[-1][1].set_xlabel("second of the run")
    legend(chart, apps_of(results))
    return saved(chart, results, path)
