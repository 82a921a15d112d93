"""Where the CPU goes (--profile): per deployment, database delay, route
and rate, each app's CPU µs per request as one bar stacked by layer
(bench/layers.py), apps side by side; and the flame graphs, one SVG per
profile beside the run's files (bench/report/flame.py)."""

import dataclasses

from bench import layers
from bench.report import flame
from bench.report.charts.common import figure, saved, styled
from bench.report.profile import place
from bench.report.tables import condition_words
from bench.routes import ROUTES

CHART_SUFFIX = "-flame.svg"  # the flame graphs' entry in the mode's charts


@styled
def draw_layers(results, path):
    """Write the chart as a PNG at path; None without --profile's records."""
    found = [p for p in results.profiles if p.layers_us]
    groups = list(dict.fromkeys(place(p) for p in found))
    if not groups:
        return None
    chart = figure(2.6 * len(groups) + 1.0)
    grid = chart.subplots(len(groups), 1, squeeze=False)
    for group, (axes,) in zip(groups, grid, strict=True):
        here = [p for p in found if place(p) == group]
        bottoms = [0.0] * len(here)
        for layer in layers.LAYERS:
            values = [p.layers_us.get(layer, 0.0) for p in here]
            names = [p.app for p in here]
            axes.barh(names, values, left=bottoms, color=flame.COLOURS[layer], label=layer)
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
        deployment, delay, route, rate, _ = group
        where = f"{ROUTES[route].label} at {rate:,g} req/s, {deployment}"
        where += condition_words(here[0], ", ")
        axes.set_title(where + (f", db +{delay:g} ms" if delay else ""))
        axes.invert_yaxis()
        axes.grid(True, axis="x", alpha=0.3)
    grid[-1][0].set_xlabel("CPU µs per request, by layer")
    handles, labels = grid[0][0].get_legend_handles_labels()
    chart.legend(handles, labels, loc="outside upper center", ncols=5, frameon=False)
    return saved(chart, results, path)


def draw_flames(results, path):
    """Write one flame graph per profile; the paths written (none without)."""
    written = []
    for profile in results.profiles:
        stem = path.name.removesuffix(CHART_SUFFIX)
        target = path.with_name(flame.file_name(stem, dataclasses.asdict(profile)))
        title = f"{profile.app} ({profile.deployment}), {ROUTES[profile.route].label} at "
        title += f"{profile.rate:,g} req/s"
        target.write_text(flame.svg(layers.unpacked(profile.sampled["stacks"]), title))
        written.append(target)
    return written
