"""The one rotation loop: every app of a run measured in turn, round after
round, the order rotating by one place per round, so that a drift of the
shared machine hits every app alike. The closed-loop peak and the open-loop
rate both measure through it (bench/modes/)."""

import contextlib
from dataclasses import dataclass, field
from typing import TextIO

from bench.load.openloop import OpenLoopError
from bench.load.wrk import WrkError
from bench.options import Options, Runs
from bench.progress import Progress, say
from bench.routes import Route
from bench.sut.database import LostWrites
from bench.sut.sources import FanOut
from bench.sut.targets import Target

# What fails one app's run (it is then not measured further), not the whole run.
FAILURES = (WrkError, OpenLoopError, LostWrites)


@dataclass(frozen=True)
class Step:
    """One measured run of one app: a route at a connection count (closed
    loop) or at a request rate (open loop)."""

    kind: str  # the Progress kind: "run" (closed loop) or "rate" (open loop)
    route: Route
    connections: int
    rate: float | None = None
    repeat: int = 0  # which of `repeats`, from 0
    repeats: int = 1

    def label(self, target):
        if self.rate is not None:
            return f"{target.label} {self.route.label} at {self.rate:g} req/s"
        label = f"{target.label} {self.route.label}, {self.connections} connections"
        if self.repeats > 1:
            label += f", run {self.repeat + 1}/{self.repeats}"
        return label


@dataclass(frozen=True)
class Context:
    """What a mode's measure() reads besides its step: the run's database,
    how each run loads the app (bench/options.py Runs) and the run's log."""

    db: object  # bench/run.py Database (a floor up: not importable here)
    runs: Runs
    log: TextIO


@dataclass
class Stage:
    """The run at one condition (one database delay, and for the ratings
    route one upstream delay and fan-out: set by the modes' sweeps), as the
    modes' before_start() and measure_apps() see it: the options their switches are
    read from, the routes, the measuring Context, Progress, the ExitStack
    that stops what they start, and the apps started and verified (set once
    they are)."""

    options: Options
    routes: list[Route]
    context: Context
    progress: Progress
    delay: float  # seconds added per round trip to Postgres (0: direct)
    exits: contextlib.ExitStack  # what the modes start is stopped when it closes
    measured: list[Target] = field(default_factory=list)
    fan_out: FanOut | None = None  # the ratings route's sources
    first_of_outer: bool = True  # else what the outermost sweep's condition sets is known


@dataclass(frozen=True)
class Sweeping:
    """What a mode's sweep() reads besides the options: Progress, where its
    logs go (a path prefix), and the records the run gathered, which it may
    add to (add())."""

    progress: Progress
    log_base: str
    gathered: dict

    def add(self, records):
        add(self.gathered, records)


def add(gathered, records):
    """gathered += records: {Results field: [records]}."""
    for name, more in records.items():
        gathered.setdefault(name, []).extend(more)


def every_app(step):
    """A round in which every app takes the same step."""
    return lambda target: step


def rotation(items, turn):
    """items in this turn's order: each takes every place in len(items) turns."""
    shift = turn % len(items) if items else 0
    return items[shift:] + items[:shift]


def measure_in_rotation(stage, rounds, measure, describe):
    """[(target, step, report, turn, place)] of every round (a function
    target -> its Step, or None where it has none), each of the stage's apps
    measured by measure(target, step, stage.context), described by
    describe(report). An app whose run fails is marked failed and left out of
    the rounds after."""
    done = []
    for turn, steps in enumerate(rounds):
        for place, target in enumerate(rotation(stage.measured, turn)):
            step = steps(target) if target.measurable else None
            if step is None:
                continue
            stage.progress.step(step.kind, step.label(target))
            try:
                report = measure(target, step, stage.context)
            except FAILURES as error:
                say(f"  {target.label} FAILED: {error}")
                target.fail(f"{type(error).__name__}: {error}")
                continue
            say(f"    {describe(report)}")
            done.append((target, step, report, turn, place))
    return done
