"""The run's plan, built once from its options: how many steps of each kind
(app starts, pgbench runs, the primer, --tune's search, closed-loop and
open-loop runs) and what each is expected to take. Each mode counts its own
(steps() in bench/modes/); every database delay repeats them all. Progress
(bench/progress.py) counts it down."""

from bench.modes import MEASURING
from bench.progress import STARTUP_SECONDS


def plan(options, apps):
    """{kind: (number of steps, nominal seconds each)} of the whole run of
    `apps` targets per database delay (the lineup's slots, or 1: --target)."""
    delays = len(options.db_delays)
    conditions = len(options.fan_outs or [1]) * len(options.upstream_delays or [1])
    planned = {"start": (0 if options.target else apps, STARTUP_SECONDS)}
    for mode in MEASURING:
        for kind, (count, seconds) in mode.steps(options, apps).items():
            planned[kind] = (planned.get(kind, (0, seconds))[0] + count, seconds)
    phases = {kind: delays * (1 if kind == "ceiling" else conditions) for kind in planned}
    planned = {kind: (count * phases[kind], seconds) for kind, (count, seconds) in planned.items()}
    if options.upstream_delays:  # the rating service's starts
        planned["upstream"] = (delays * len(options.upstream_delays), STARTUP_SECONDS)
    return planned
