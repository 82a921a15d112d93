"""The modes, each a Mode (bench/modes/mode.py) in a module of its own: the
kinds of measurement (the pgbench ceiling, the closed-loop peak, --tune, the
capacity at a latency objective (--slo), goodput past it (--overload), a
spike and the recovery (--spike), the open-loop rate (--rate), where each
app's CPU goes by layer (--profile)) and the sections of the report that
present what they found (the database-delay sweep, the ratings route's
fan-out, the server matrix, the proxy and replica comparisons, the CPU per
request by part).

Adding a mode is adding its module here: its MODE in MODES, in the place its
section takes in the report, in MEASURING if it measures, and in SWEEPING if
it sweeps conditions. Nothing else
names it: the command line adds its flags, the refusals ask it, the run
installs its extras, records its facts and runs its steps, all through
MODES."""

import dataclasses

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
from bench.options import with_fields
from bench.report.markdown import markdown

# In the report's order: what a run compared first, then the per-section tables.
MODES = [
    ceiling.MODE,
    capacity.MODE,
    overload.MODE,
    spike.MODE,
    tune.MODE,
    fan_out.MODE,
    proxy_cost.MODE,
    replica_sweep.MODE,
    db_delay.MODE,
    server_matrix.MODE,
    open_loop.MODE,
    profile.MODE,
    peak.MODE,
    cpu.MODE,
]
# In the order they measure at each database delay: the ceiling before the apps
# start, the closed loop (or --tune's) before the capacity search, which starts
# from its peaks, the overload and the spike after it (multiples of its
# capacities), and the open loop, whose auto rates are fractions of the peaks.
MEASURING = [
    mode.MODE for mode in (ceiling, peak, tune, capacity, overload, spike, open_loop, profile)
]
# The sweeps, nested in this order (a stage per combination of their conditions):
# the database's delay outermost (the ceiling is measured once per delay), then
# the ratings route's sources, started once per upstream delay for its fan-outs.
SWEEPING = [db_delay.MODE, fan_out.MODE]


def options_type():
    """The Options of a run: bench/options.py's, and every mode's own fields
    (Mode.fields), in MODES' order."""
    return with_fields(tuple(field for mode in MODES for field in mode.fields))


def report(results):
    """The run's Markdown report: every mode's section, in MODES' order."""
    return markdown(results, [mode.section for mode in MODES])


def charts():
    """[(chart function, file suffix)] of every mode, in MODES' order."""
    return [chart for mode in MODES for chart in mode.charts]


def options(parser):
    """Every mode's flags, in a group of its own per mode, in MODES' order."""
    for mode in MODES:
        if mode.title:
            mode.options(parser.add_argument_group(mode.title))


def defaulted(options):
    """options with what every mode fills in (its defaults), in MODES' order."""
    for mode in MODES:
        options = dataclasses.replace(options, **mode.defaults(options))
    return options


def chosen(options):
    """The deployments the first mode that chooses them chooses, or None."""
    return next(filter(None, (mode.chooses(options) for mode in MODES)), None)


def tools(options):
    """The system tools every mode of the run needs, each named once."""
    return list(dict.fromkeys(tool for mode in MODES for tool in mode.tools(options)))


def refused(options):
    """The first mode's refusal of these options, or None."""
    return next(filter(None, (mode.refused(options) for mode in MODES)), None)


def recorded(options):
    """{Results field: value}: the facts each mode records once per run."""
    return {name: value for mode in MODES for name, value in mode.recorded(options).items()}
