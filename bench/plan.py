"""The run's plan as Progress counts it: how many steps of each kind (pgbench
runs, app starts, the primer, closed-loop runs, open-loop runs), each mode
counting its own (bench/modes/), and what is left of it as the run goes."""

import time

from bench.modes import ceiling, db_delay, open_loop, peak, tune
from bench.routes import ROUTES
from bench.stack import targets

STARTUP_SECONDS = 5  # what an app's start is planned to take, before it is measured
RUN_OVERHEAD_SECONDS = 1  # likewise, around each wrk run: settle, count, reset


def say(message):
    print(message, flush=True)


def duration_text(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def plan(options):
    """{kind: (number of steps, nominal seconds each)}: every database delay
    (bench/modes/db_delay.py) repeats the whole plan."""
    routes = [ROUTES[key] for key in options.routes]
    apps = 1 if options.target else len(targets.pairs(options))
    phases = len(db_delay.phases(options))
    ceilings = 0
    if options.pgbench and (options.database_url or not options.target):
        ceilings = len(ceiling.plan(options, routes))
    closed = not peak.skipped(options)
    per_run = options.duration + options.warmup + RUN_OVERHEAD_SECONDS
    searched = apps * len(tune.search_rounds(options, routes)) if options.tune and closed else 0
    confirmed = len(options.apps) if options.tune else apps  # --tune: one configuration each
    trial = tune.search_options(options)
    return {
        "search": (searched * phases, trial.duration + trial.warmup + RUN_OVERHEAD_SECONDS),
        "primer": (
            phases if closed and options.warmup else 0,
            apps * len(routes) * options.warmup,
        ),
        "ceiling": (ceilings * phases, ceiling.seconds(options)),
        "start": (0 if options.target else apps * phases, STARTUP_SECONDS),
        "run": (confirmed * len(peak.rounds(options, routes)) * phases if closed else 0, per_run),
        "rate": (apps * len(routes) * open_loop.rates_per_route(options) * phases, per_run),
    }


class Progress:
    """What runs now, and how long is left: the steps still planned, each
    costed at what the steps of its kind have really taken so far (at a nominal
    figure until one has finished). Starting an app, settling and resetting
    around a run cost more than nominal figures say, and differ by machine."""

    def __init__(self, plan):
        """plan: {kind: (number of steps, nominal seconds each)}."""
        self.count = {kind: count for kind, (count, _) in plan.items()}
        self.nominal = {kind: seconds for kind, (_, seconds) in plan.items()}
        self.taken = {kind: [] for kind in plan}
        self.running = None  # (kind, when it started) of the step under way

    def cost(self, kind):
        taken = self.taken[kind]
        return sum(taken) / len(taken) if taken else self.nominal[kind]

    def left(self):
        """Seconds left, counting the step under way as a whole one."""
        return sum(count * self.cost(kind) for kind, count in self.count.items())

    def step(self, kind, message):
        now = time.monotonic()
        if self.running:
            self.taken[self.running[0]].append(now - self.running[1])
        self.running = (kind, now)
        say(f"  {message} (about {duration_text(self.left())} left)")
        self.count[kind] = max(self.count[kind] - 1, 0)
