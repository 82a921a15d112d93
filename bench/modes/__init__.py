"""The kinds of measurement, one module each: the pgbench ceiling, the
closed-loop peak, the open-loop rate, the database-delay sweep, the ratings
route's fan-out sweep, the server matrix, the proxy comparison, the replica
comparison, --tune, the capacity at a latency objective (--slo), goodput
past it (--overload), a spike and the recovery (--spike), and the CPU per
request by part (of every run the others measure), and by layer inside each
app (--profile).

What a mode may define (each is looked up, none is required):
- steps(options, apps) -> {kind: (count, seconds each)}: its share of the
  run's plan at one database delay, which Progress counts down (bench/plan.py);
- before_start(stage) -> {Results field: [records]}: what it measures before
  the apps start (the ceiling);
- run(stage, found) -> {Results field: [records]}: what it measures of the
  apps started and verified (stage.measured), usually through the one
  rotation loop (bench/rotation.py); found holds the records of the modes
  before it at this delay;
- section(results) -> Markdown lines: its part of the report;
- CHARTS: the chart functions of bench/report/charts/ it draws, with their
  file suffixes;
- refused(options) -> a sentence or None: why its options cannot run with
  the others (bench/refusals.py asks every measuring mode).

Adding a mode is adding its module here: its name in MODES, in the place its
section takes in the report, and in MEASURING if it measures."""

from bench.modes import (
    capacity,
    ceiling,
    cpu,
    db_delay,
    fan_out,
    open_loop,
    overload,
    peak,
    profile,
    proxy_cost,
    replica_sweep,
    server_matrix,
    spike,
    tune,
)
from bench.report.markdown import markdown

# In the report's order: what a run compared first, then the per-section tables.
MODES = [
    ceiling,
    capacity,
    overload,
    spike,
    tune,
    fan_out,
    proxy_cost,
    replica_sweep,
    db_delay,
    server_matrix,
    open_loop,
    profile,
    peak,
    cpu,
]
# In the order they measure at each database delay: the ceiling before the apps
# start, the closed loop (or --tune's) before the capacity search, which starts
# from its peaks, the overload and the spike after it (multiples of its
# capacities), and the open loop, whose auto rates are fractions of the peaks.
MEASURING = [ceiling, peak, tune, capacity, overload, spike, open_loop, profile]


def report(results):
    """The run's Markdown report: every mode's section, in MODES' order."""
    return markdown(results, [mode.section for mode in MODES])


def charts():
    """[(chart function, file suffix)] of every mode, in MODES' order."""
    return [chart for mode in MODES for chart in mode.CHARTS]
