"""A spike and the recovery (--spike): per deployment, database delay, route
and connection count, against each second of the schedule, the p99 of the
answers (left, log) and the goodput (right), one line per app (the median
over its runs), the objective dashed, the spike's window shaded, each app's
recovery a dotted line in its colour, and the rate offered in grey on the
goodput's side (each app's own multiple of its capacity)."""

import statistics

from matplotlib.ticker import MaxNLocator

from bench.intervals import median
from bench.report.charts.common import apps_of, color, figure, legend, log_axis, saved, styled
from bench.report.tables import where
from bench.routes import ROUTES


def window(axes, found):
    """The spike's seconds, shaded."""
    start = sum(phase["seconds"] for phase in found.phases[: found.spike])
    axes.axvspan(start, found.spike_end_s, color="0.9", zorder=0)


def p99_axes(axes, spikes, objective_ms):
    for found in spikes:
        points = [(row["second"] + 0.5, median(row["p99_ms"])) for row in found.per_second]
        axes.plot(
            [second for second, ms in points if ms is not None],
            [ms for ms in (ms for _, ms in points) if ms is not None],
            marker=".",
            color=color(found.app),
        )
        recovered = found.recovery_s["value"]
        if recovered is not None:
            axes.axvline(found.spike_end_s + recovered, color=color(found.app), linestyle=":")
    axes.axhline(objective_ms, color="0.3", linestyle="--", linewidth=1)
    window(axes, spikes[0])
    log_axis(axes)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(True, which="both", alpha=0.3)


def goodput_axes(axes, spikes):
    for found in spikes:
        seconds = [row["second"] + 0.5 for row in found.per_second]
        offered = [row["rate"] for row in found.per_second]
        edges = list(range(len(offered) + 1))
        axes.stairs(offered, edges, color="0.75", linewidth=1)
        axes.plot(
            seconds,
            [statistics.median(row["good"]) for row in found.per_second],
            marker=".",
            color=color(found.app),
        )
        refused = [statistics.median(row["refused"]) for row in found.per_second]
        if any(refused):
            axes.plot(seconds, refused, linestyle=":", color=color(found.app))
    window(axes, spikes[0])
    axes.set_ylim(bottom=0)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(True, alpha=0.3)


@styled
def draw_spike(results, path):
    """Write the chart as a PNG at path; None without --spike's records."""
    found = results.spike
    groups = list(dict.fromkeys(where(s) for s in found))
    if not groups:
        return None
    objective = results.objective or {}
    chart = figure(2.9 * len(groups) + 1.2)
    grid = chart.subplots(len(groups), 2, squeeze=False)
    for group, (left, right) in zip(groups, grid, strict=True):
        spikes = [s for s in found if where(s) == group]
        deployment, delay, route, connections, *_ = group
        place = f"{deployment}, {connections} conn." + (f", db +{delay:g} ms" if delay else "")
        p99_axes(left, spikes, objective.get("ms", 0))
        goodput_axes(right, spikes)
        left.set_ylabel(f"{place}\n{ROUTES[route].label}\np99 ms (log)", fontsize=9)
        right.set_ylabel("req/s")
    at = f"p{objective.get('percentile', 99):g} <= {objective.get('ms', 0):g} ms"
    grid[0][0].set_title(f"p99 of each second's answers (dashed: {at}; shaded: the spike)")
    grid[0][1].set_title("goodput per s (solid), 503/s (dotted), offered (grey)")
    grid[-1][0].set_xlabel("second of the schedule (by due time)")
    grid[-1][1].set_xlabel("second of the schedule (by due time)")
    legend(chart, apps_of(results))
    return saved(chart, results, path)
