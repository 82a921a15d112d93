"""The decision, in one chart: each app at its best (the configuration of the
run with the most req/s, bench/modes/db_delay.py best()) against the
database's distance, at each connection count: req/s above, the p99 of that
same configuration below. Where the run measured an app in several
configurations, the winning one is named on the req/s line where it changes.
Drawn for the run's first route; the report's decision table has every
route."""

from bench.report.charts.common import apps_of, color, figure, legend, log_axis, saved, styled
from bench.report.select import best
from bench.report.tables import delays
from bench.routes import ROUTES

METRICS = [
    ("requests/s, best configuration (log)", lambda peak: peak.summary.requests_per_s),
    ("p99 ms of that configuration (log)", lambda peak: peak.summary.latency_ms["p99"]),
]


def configurations_differ(results):
    """Whether some app was measured in more than one deployment: then each
    point's winning configuration is worth a label."""
    seen = {}
    for peak in results.measurements:
        seen.setdefault(peak.app, set()).add(peak.configuration or peak.deployment)
    return any(len(deployments) > 1 for deployments in seen.values())


def winner_labels(axes, points, app):
    """Name the winning deployment where an app's line starts and wherever it
    changes, not at every point: short enough to stay legible."""
    previous = None
    for x, y, deployment in points:
        if deployment != previous:
            axes.annotate(
                deployment,
                (x, y),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=8,
                color=color(app),
            )
        previous = deployment


@styled
def draw_decision(results, path):
    """Write the decision chart as a PNG at path; None unless several
    database delays were measured."""
    ticks = sorted(delays(results))
    if len(ticks) < 2:
        return None
    route = results.wrk["routes"][0]
    winners = best(results, route)
    counts = sorted({p.connections for p in results.measurements if p.route == route})
    apps = apps_of(results)
    labelled = configurations_differ(results)
    chart = figure(7.5)
    grid = chart.subplots(len(METRICS), len(counts), squeeze=False, sharex=True, sharey="row")
    for place, (row, (name, value)) in enumerate(zip(grid, METRICS, strict=True)):
        for axes, count in zip(row, counts, strict=True):
            for app in apps:
                points = [
                    (index, value(peak), peak.configuration or peak.deployment)
                    for index, delay in enumerate(ticks)
                    if (peak := winners.get((app, delay, count)))
                ]
                if not points:
                    continue
                xs, ys, _ = zip(*points, strict=True)
                axes.plot(xs, ys, marker="o", color=color(app))
                if labelled and place == 0:  # the p99 below is that same configuration's
                    winner_labels(axes, points, app)
            log_axis(axes)
            axes.grid(True, which="both", alpha=0.3)
        row[0].set_ylabel(name)
    for axes, count in zip(grid[0], counts, strict=True):
        axes.set_title(f"{count} clients (wrk connections)")
    for axes in grid[-1]:
        axes.set_xticks(range(len(ticks)), [f"{tick:g}" for tick in ticks])
        axes.set_xlim(-0.25, len(ticks) - (0.4 if labelled else 0.75))  # room for a label
        axes.set_xlabel("database delay, ms per round trip")
    legend(chart, apps, title=f"{ROUTES[route].label}: each app at its best")
    return saved(chart, results, path)
