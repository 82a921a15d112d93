"""The charts of a run, one module per kind (matplotlib, installed by the
harness when a run first draws): the modes name theirs in CHARTS
(bench/modes/), drawn() draws them all beside a run's JSON, and
`python -m bench.report.charts RESULTS.json ...` redraws a saved run's."""

from bench.modes import MODES
from bench.report.charts.decision import draw_decision
from bench.report.charts.latency import draw_latency
from bench.report.charts.matrix import draw_matrix
from bench.report.charts.peak import draw
from bench.report.charts.sweep import draw_sweep

__all__ = ["draw", "draw_decision", "draw_latency", "draw_matrix", "draw_sweep", "drawn"]


def drawn(results, base, suffixes=None):
    """Every chart the modes register (those of suffixes, when given), for
    results, at base + its suffix; the paths written (a chart with nothing to
    show is not drawn)."""
    paths = []
    for mode in MODES:
        for name, suffix in mode.CHARTS:
            if suffixes is not None and suffix not in suffixes:
                continue
            path = base.parent / (base.name + suffix)
            if globals()[name](results, path):
                paths.append(path)
    return paths
