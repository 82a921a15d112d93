"""The run's plan, built once from its options: how many steps of each kind
(app starts, pgbench runs, the primer, --tune's search, closed-loop and
open-loop runs, the rating service's starts) and what each is expected to
take. Each mode counts its own (steps() in bench/modes/) per stage, and
every sweep its conditions (conditions()): a stage per combination of
them. Progress (bench/progress.py) counts it down."""

from bench.modes import MEASURING, SWEEPING
from bench.progress import STARTUP_SECONDS


def plan(options, apps):
    """{kind: (number of steps, nominal seconds each)} of the whole run of
    `apps` targets per stage (the lineup's slots, or 1: --target)."""
    planned, stages, outer = {}, 1, None
    for mode in SWEEPING:  # outermost first: each sets itself up per condition outside it
        count, setup = mode.conditions(options)
        add(planned, setup, stages)
        stages *= count
        outer = outer or stages
    add(planned, {"start": (0 if options.target else apps, STARTUP_SECONDS)}, stages)
    for mode in MEASURING:
        add(planned, mode.steps(options, apps), outer if mode.once_per_outer else stages)
    return planned


def add(planned, steps, times):
    """planned += steps, each taken `times` times."""
    for kind, (count, seconds) in steps.items():
        planned[kind] = (planned.get(kind, (0, seconds))[0] + count * times, seconds)
