"""The charts of a run, one module per kind (matplotlib, installed by the
harness when a run first draws): the modes name theirs in their charts
(bench/modes/), and drawn() draws those it is given beside a run's JSON
(`python -m bench.redraw RESULTS.json ...` redraws a saved run's)."""

from bench.report.charts.decision import draw_decision
from bench.report.charts.latency import draw_latency
from bench.report.charts.layers import draw_flames, draw_layers
from bench.report.charts.matrix import draw_matrix
from bench.report.charts.overload import draw_overload
from bench.report.charts.peak import draw
from bench.report.charts.spike import draw_spike
from bench.report.charts.sweep import draw_sweep

__all__ = [
    "draw",
    "draw_decision",
    "draw_flames",
    "draw_layers",
    "draw_latency",
    "draw_matrix",
    "draw_overload",
    "draw_spike",
    "draw_sweep",
    "drawn",
]


def drawn(results, base, charts, suffixes=None):
    """Each chart of charts ([(function name, file suffix)]; those of
    suffixes, when given), for results, at base + its suffix; the paths
    written (a chart with nothing to show is not drawn; one that draws a
    file per record, the flame graphs, returns their paths)."""
    paths = []
    for name, suffix in charts:
        if suffixes is not None and suffix not in suffixes:
            continue
        path = base.parent / (base.name + suffix)
        found = globals()[name](results, path)
        if isinstance(found, list):
            paths += found
        elif found:
            paths.append(path)
    return paths
