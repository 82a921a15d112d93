"""One app's capacity search on one route at one connection count: which
rate it offers next, and the confirmation of what it found.

The search brackets and bisects from the closed-loop peak (wrk's req/s, the
peak mode's): the peak first; up by UP while a rate holds, down by DOWN
until one does; then the middle of the highest rate that held and the
lowest that broke, until they are within TOLERANCE or MAX_STEPS were taken.
Each step offers one rate for --slo-step seconds after the warm-up, in every
one of --repeat rounds, the apps in rotation (bench/rotation.py); its
verdict is that of the rounds' histograms merged (percentiles are never
averaged), and it holds only where the app kept pace: the answers that ended
in the schedule's second half within PACE of the requests due in it. A queue
that grows passes a percentile over a step short beside the objective (at
1.3x what an app can answer, a 2 s step's latencies reach 0.6 s, within a
1 s objective): it cannot pass the pace. A step where the generator could
not keep its schedule (its own lateness, send_lag_ms, beyond LATE of the
objective) is offered once more;
invalid again, it counts as broken, and the report says so.

The highest of a few short, noisy steps that held is biased upward (Flask's
626 req/s held over 3 s steps; 626 offered again for 6 s had a p99 of 190 ms,
near twice the objective). So the search's capacity is then confirmed: offered
once more, for CONFIRM_STEPS steps' length in one run, it must hold; where it
breaks, the capacity steps down by the search's resolution (TOLERANCE: to the
broken rate / 1.1, or to a rate the search held in between) until a
confirmation holds, at most CONFIRM_TRIES runs (k6 and TailBench keep a load
only where it held for its whole length). A confirmation counts as a step's
verdict in every round: the capacity is the highest rate that held below the
lowest that broke, confirmations included; its 95 % interval
bootstraps over the rounds (bench/intervals.py), every step's verdict
recomputed from the rounds drawn, from the 2.5th percentile of the
capacities to the 97.5th of the lowest rates that broke above them: the
interval holds the search's resolution as well as the noise between rounds."""

import dataclasses
import math

from bench.modes import open_loop
from bench.modes.capacity.verdict import holds, reduced
from bench.options import Objective
from bench.routes import Route
from bench.sut.targets import Target

UP, DOWN = 1.5, 0.5  # the bracket's factors
TOLERANCE = 0.1  # bisect until the highest held and lowest broken are within 10 %
MAX_STEPS = 8  # per app, route and condition: 1 + bracket + bisection
CONFIRM_STEPS = 3  # a confirmation run is this many search steps long
CONFIRM_TRIES = 5  # confirmations per search: down to about 0.7x the search's capacity


@dataclasses.dataclass
class Search:
    """One app's search on one route at one connection count."""

    target: Target
    route: Route
    connections: int
    peak_rps: float
    objective: Objective
    rounds: int
    deployment: str  # the peak's: "best" for --tune's chosen configuration
    max_steps: int = MAX_STEPS
    rate: float | None = None  # the rate offered next; None: done
    tried: dict = dataclasses.field(default_factory=dict)  # rate -> [Reduced per round]
    order: list = dataclasses.field(default_factory=list)  # rates in the order offered
    retried: dict = dataclasses.field(default_factory=dict)  # rate -> the first try's lateness
    # The confirmation, after the search: rate -> its one long run's Reduced, in
    # the order offered; the rate confirmed next (None: not begun, or done).
    confirmations: dict = dataclasses.field(default_factory=dict)
    confirming: float | None = None
    confirm_retried: dict = dataclasses.field(default_factory=dict)  # rate -> first lateness
    searched_rps: float | None = None  # the capacity the search said, before its confirmation

    def __post_init__(self):
        self.rate = max(1.0, float(round(self.peak_rps)))

    def add(self, repeat, report):
        """One round's run at the current rate; the step decided after the last."""
        if self.rate not in self.tried:
            self.tried[self.rate] = [None] * self.rounds
            self.order.append(self.rate)
        self.tried[self.rate][repeat] = reduced(report, self.objective)
        runs = self.tried[self.rate]
        if not all(runs):
            return
        late = [run.late_ms for run in runs if not run.valid]
        if late and self.rate not in self.retried:  # the generator's stall: offered once more
            self.retried[self.rate] = max(late)
            self.tried[self.rate] = [None] * self.rounds
            return
        self.rate = self.next_rate()

    def next_rate(self):
        """The next rate to offer, or None when the search is done."""
        held, broke = bracket(self.verdicts(range(self.rounds)))
        if len(self.order) >= self.max_steps:
            return None
        if broke is None:
            higher = float(round(held * UP))
            return higher if higher <= open_loop.openloop.MAX_RATE else None
        if held is None:
            lower = float(math.floor(broke * DOWN))
            return lower if lower >= 1 else None
        if broke <= held * (1 + TOLERANCE) or broke - held <= 1:
            return None
        return float(round((held + broke) / 2))

    def verdicts(self, drawn):
        """{rate: held} over the rounds drawn (indices, repeats allowed); a
        confirmation's verdict, the longer run, in every draw and over the
        search's at its rate."""
        found = {
            rate: holds([runs[i] for i in drawn], self.objective)
            for rate, runs in self.tried.items()
            if all(runs)
        }
        for rate, run in self.confirmations.items():
            found[rate] = holds([run], self.objective)
        return found

    def confirm(self, report=None):
        """The confirmation's next rate, after the run at the current one
        (report; None: begin with the search's capacity). A run the generator
        was late for is offered once more, as a step is."""
        if report is None:
            self.searched_rps = self.capacity(range(self.rounds))
        else:
            run, rate = reduced(report, self.objective), self.confirming
            if not run.valid and rate not in self.confirm_retried:
                self.confirm_retried[rate] = run.late_ms
                return
            self.confirmations[rate] = run
        self.confirming = next_confirmation(
            self.capacity(range(self.rounds)), self.confirmations, self.objective
        )

    def capacity(self, drawn):
        """The capacity the rounds drawn say: the highest rate that held below
        the lowest that broke (0: none held)."""
        return capacity_of(self.verdicts(drawn))

    def bracket(self, drawn):
        """(the capacity, the lowest rate that broke above it): where the true
        capacity lies, to the search's resolution. Where no rate above it
        broke in the rounds drawn (a stall broke one rate in one round only,
        and that round was not drawn; or the search stopped before), the
        rounds do not bound it: up to the bracket's next step, UP times it."""
        held, broke = bracket(self.verdicts(drawn))
        return held or 0.0, broke or (held or 0.0) * UP


def next_confirmation(value, confirmations, objective, tries=CONFIRM_TRIES):
    """The rate to confirm next, or None when done. value: the capacity the
    verdicts say so far, confirmations included (0: none held); confirmations:
    {rate: Reduced}. Done when one held, or after `tries`. Else the capacity
    first; below a rate that broke, the highest the search held under it if
    within the resolution (TOLERANCE), else that rate / (1 + TOLERANCE)."""
    if len(confirmations) >= tries or any(holds([r], objective) for r in confirmations.values()):
        return None
    rate = value
    if confirmations:
        rate = max(value, float(math.floor(min(confirmations) / (1 + TOLERANCE))))
    return rate if rate >= 1 else None


def bracket(verdicts):
    """(the highest rate that held below the lowest that broke, that lowest
    rate): either None when none did."""
    broke = min((rate for rate, held in verdicts.items() if not held), default=None)
    held = [rate for rate, ok in verdicts.items() if ok and (broke is None or rate < broke)]
    return max(held, default=None), broke


def capacity_of(verdicts):
    """The capacity the verdicts say: the highest rate that held below the
    lowest that broke (0: none held)."""
    return bracket(verdicts)[0] or 0.0
