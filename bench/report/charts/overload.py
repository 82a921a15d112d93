"""Past capacity (--overload): per deployment, database delay, route and
connection count, goodput (left) and errors (right) per second against the
rate offered, one line per app, each app's capacity marked by a dotted line
in its colour. Where goodput holds level past the capacity the app refuses
the excess cheaply; where it falls, its queue made every answer late."""

from bench.report.charts.common import apps_of, color, figure, legend, saved, styled
from bench.report.tables import where
from bench.routes import ROUTES


def goodput_axes(axes, rows):
    """Goodput against offered, per app; the line offered = answered for scale."""
    top = max(r.offered_rps for r in rows)
    axes.plot([0, top], [0, top], color="0.8", linewidth=1)
    for app in dict.fromkeys(r.app for r in rows):
        mine = sorted((r for r in rows if r.app == app), key=lambda r: r.offered_rps)
        axes.plot(
            [r.offered_rps for r in mine],
            [r.goodput_rps["value"] for r in mine],
            marker="o",
            color=color(app),
        )
        axes.axvline(mine[0].capacity_rps, color=color(app), linestyle=":", linewidth=1)
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)


def errors_axes(axes, rows):
    """503 refusals (solid) and every other error (dashed) per second, per app."""
    for app in dict.fromkeys(r.app for r in rows):
        mine = sorted((r for r in rows if r.app == app), key=lambda r: r.offered_rps)
        offered = [r.offered_rps for r in mine]
        axes.plot(offered, [r.refused_rps for r in mine], marker="o", color=color(app))
        others = [sum(r.errors_rps.values()) for r in mine]
        axes.plot(offered, others, marker="x", linestyle="--", color=color(app))
        axes.axvline(mine[0].capacity_rps, color=color(app), linestyle=":", linewidth=1)
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)


@styled
def draw_overload(results, path):
    """Write the chart as a PNG at path; None without --overload's records."""
    found = results.overload
    groups = list(dict.fromkeys(where(o) for o in found))
    if not groups:
        return None
    chart = figure(2.9 * len(groups) + 1.2)
    grid = chart.subplots(len(groups), 2, squeeze=False)
    for group, (left, right) in zip(groups, grid, strict=True):
        rows = [o for o in found if where(o) == group]
        deployment, delay, route, connections, *_ = group
        place = f"{deployment}, {connections} conn." + (f", db +{delay:g} ms" if delay else "")
        goodput_axes(left, rows)
        errors_axes(right, rows)
        left.set_ylabel(f"{place}\n{ROUTES[route].label}\ngoodput req/s", fontsize=9)
        right.set_ylabel("errors/s")
    objective = results.objective or {}
    at = f"p{objective.get('percentile', 99):g} <= {objective.get('ms', 0):g} ms"
    grid[0][0].set_title(f"goodput: 2xx within {at}, per s (dotted: capacity)")
    grid[0][1].set_title("503/s (solid), other errors/s (dashed)")
    grid[-1][0].set_xlabel("offered req/s")
    grid[-1][1].set_xlabel("offered req/s")
    legend(chart, apps_of(results))
    return saved(chart, results, path)
