"""The decision, in one chart: each app at its best (bench/report/select.py
best(): by capacity at the objective when the run has it, else req/s)
against the database's distance, at each connection count. With --slo: its
capacity at the objective above, with its 95 % interval, and the CPU the
app's processes spent per request below (Postgres runs the same SQL for
each); else
its req/s above and the p99 of that same configuration below. Where the
run measured an app in several configurations, the winning one is named
on the top line where it changes. Drawn for the run's first route; the
report's decision table has every route."""

from bench.report.charts.common import apps_of, color, figure, legend, log_axis, saved, styled
from bench.report.select import best, capacity_of
from bench.report.tables import delays
from bench.routes import ROUTES

CLOSED = [
    ("requests/s, best configuration (log)", lambda results, peak: peak.summary.requests_per_s),
    ("p99 ms of that configuration (log)", lambda results, peak: peak.summary.latency_ms["p99"]),
]


def capacity(results, peak):
    """(capacity, its 95 % interval or None) of a Peak's search, or None."""
    found = capacity_of(results, peak)
    return (found["value"], found.get("ci95")) if found and found["value"] else None


def app_us(results, peak):
    parts = peak.cpu_us_per_request
    return parts.get("app") if parts else None


def metrics(results):
    """[(axis label, (results, Peak) -> value, or (value, interval), or None)]."""
    if not results.capacity:
        return CLOSED
    objective = results.objective or results.capacity[0].capacity_rps["objective"]
    at = f"p{objective['percentile']:g} <= {objective['ms']:g} ms"
    return [
        (f"capacity, req/s at {at} (log)", capacity),
        ("CPU µs per request, the app's (log)", app_us),
    ]


def value_of(found):
    """A metric's value: the first of (value, interval), or the value itself."""
    return found[0] if isinstance(found, tuple) else found


def plotted(axes, points, app):
    """Its line, and where a point has an interval, the interval as a bar."""
    xs = [x for x, _, _ in points]
    ys = [value_of(y) for _, y, _ in points]
    axes.plot(xs, ys, marker="o", color=color(app))
    for x, y, _ in points:
        if isinstance(y, tuple) and y[1]:
            axes.vlines(x, *y[1], color=color(app), alpha=0.5, linewidth=3)


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
    shown = metrics(results)
    grid = chart.subplots(len(shown), len(counts), squeeze=False, sharex=True, sharey="row")
    for place, (row, (name, value)) in enumerate(zip(grid, shown, strict=True)):
        for axes, count in zip(row, counts, strict=True):
            for app in apps:
                points = [
                    (index, found, peak.configuration or peak.deployment)
                    for index, delay in enumerate(ticks)
                    if (peak := winners.get((app, delay, count)))
                    and (found := value(results, peak)) is not None
                ]
                if not points:
                    continue
                plotted(axes, points, app)
                if labelled and place == 0:  # the figure below is that same configuration's
                    winner_labels(axes, [(x, value_of(y), d) for x, y, d in points], app)
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
