"""Capacity at a latency objective (--slo 100ms, --slo p95:50ms): for every
app, route, connection count and database delay, the most requests/s the
open loop (bench/load/openloop: latency from each request's due time, so
corrected for coordinated omission) can offer with the objective's
percentile within it, a request that failed (an error, a refusal: the apps'
503 past their admission limit) counted as one beyond it: "p99 <= 100 ms"
is "99 % of the requests answered 2xx within 100 ms", as an SLO counts good
events among valid ones.

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
interval holds the search's resolution as well as the noise between rounds.

The report's first table then ranks the apps by capacity, closed-loop req/s
beside it, each ratio to the baseline with its interval ("no measurable
difference" inside it or the A/A floor), the bound that binds and the open
loop's connection model."""

import dataclasses
import math

from bench import intervals
from bench.load.measure import measure_once
from bench.modes import open_loop
from bench.records import Capacity
from bench.report.capacity import floor_for
from bench.report.capacity import section as section  # the mode's section: a view of its records
from bench.report.tables import baseline_app, condition
from bench.rotation import Step, measure_in_rotation
from bench.values import DEFAULT_OBJECTIVE

CHARTS = []
UP, DOWN = 1.5, 0.5  # the bracket's factors
TOLERANCE = 0.1  # bisect until the highest held and lowest broken are within 10 %
MAX_STEPS = 8  # per app, route and condition: 1 + bracket + bisection
# A step is invalid when the generator's own p99 lateness (due time to
# release) takes more than this share of the objective, and more than
# LATE_FLOOR_MS: the step would break on the generator's account. On the busy
# 2-core machine its p99 lateness is 1-10 ms, with stalls of 30-100 ms (and
# more) when other work holds both cores.
LATE = 0.5
LATE_FLOOR_MS = 5.0
PACE = 0.1  # the share of the second half's due requests a step may leave unanswered
RETRIES = 2  # the rounds' room for steps offered again, beyond max_steps
CONFIRM_STEPS = 3  # a confirmation run is this many search steps long
CONFIRM_TRIES = 5  # confirmations per search: down to about 0.7x the search's capacity
EXPLAINS = 1.25  # a bound within this of the closed-loop peak is what saturated it


def objective_of(options):
    """The objective the run measures at: --slo's, else --tune's default."""
    return options.slo or DEFAULT_OBJECTIVE


def steps(options, apps):
    """Its steps per database delay, for Progress: at most MAX_STEPS rates on
    every route and connection count, each in every round."""
    if not options.slo:
        return {}
    runs = options.runs
    searches = apps * len(options.routes) * len(runs.connections)
    each = options.slo_step + runs.warmup + 1
    confirm = CONFIRM_STEPS * options.slo_step + runs.warmup + 1
    return {
        "capacity": (searches * MAX_STEPS * runs.repeat, each),
        "confirm": (searches * CONFIRM_TRIES, confirm),
    }


@dataclasses.dataclass
class Search:
    """One app's search on one route at one connection count."""

    target: object
    route: object
    connections: int
    peak_rps: float
    objective: object
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


@dataclasses.dataclass(frozen=True)
class Reduced:
    """What a step's verdict needs of one run: requests answered, failed,
    answered beyond the objective; and whether the generator kept its schedule."""

    answered: int
    failed: int  # sent and not answered 2xx: errors, refusals, no answer
    beyond: int  # 2xx answers beyond the objective
    late_ms: float  # the generator's p99 lateness
    valid: bool
    histogram: str  # the encoded latency histogram, to merge
    opened: int = 0  # connections the generator opened
    round_trips: float | None = None  # to Postgres per request, through a delay proxy
    service_ms: float | None = None  # mean latency from the actual send (not the due time)
    paced: int = 0  # answers that ended in the schedule's second half
    due: int = 0  # requests due in it (0: not reported, the pace not judged)
    sent: int = 0

    def __bool__(self):
        return True


def reduced(report, objective):
    """A run's Reduced against the objective."""
    answered = report["ok"] + report["non_2xx"]
    late = late_ms(report)
    return Reduced(
        answered=answered,
        sent=report["sent"],
        failed=report["sent"] - report["ok"],
        # The 2xx answers beyond it (the failed count apart, whatever their time).
        beyond=beyond(decoded(report.get("ok_histogram") or report["histogram"]), objective.ms),
        late_ms=late,
        valid=late <= allowed_late_ms(objective),
        histogram=report["histogram"],
        opened=report.get("connections_opened") or 0,
        round_trips=report.get("round_trips_per_request"),
        service_ms=(report.get("service_ms") or {}).get("mean"),
        paced=(report.get("pace") or {}).get("answered", 0),
        due=(report.get("pace") or {}).get("due", 0),
    )


def late_ms(report):
    """The generator's own p99 lateness in a run (due time to release)."""
    return (report.get("send_lag_ms") or {}).get("p99", 0.0)


def allowed_late_ms(objective):
    """The most of it a run may have and still be judged (LATE, LATE_FLOOR_MS)."""
    return max(LATE_FLOOR_MS, objective.ms * LATE)


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


def holds(runs, objective):
    """Whether the runs together kept the objective: every run valid, at most
    (100 - percentile) % of the requests missed it (a 2xx beyond it, or a
    failure: an error, a refusal, no answer), and pace kept."""
    requests = sum(run.sent for run in runs)
    if requests <= sum(run.failed for run in runs) or not all(run.valid for run in runs):
        return False
    allowed = math.floor(requests * (100 - objective.percentile) / 100 + 1e-9)
    missed = sum(run.beyond + run.failed for run in runs)
    return missed <= allowed and kept_pace(runs)


def kept_pace(runs):
    """Whether the runs' answers kept up with their schedules' second halves,
    within PACE and a request per run (where a request ends is a matter of
    microseconds at the half's edges)."""
    due = sum(run.due for run in runs)
    return sum(run.paced for run in runs) >= due * (1 - PACE) - len(runs)


def pace_of(runs):
    """The runs' answers in their second halves over the requests due in them
    (None where no run reported it)."""
    due = sum(run.due for run in runs)
    return sum(run.paced for run in runs) / due if due else None


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


def beyond(histogram, limit_ms):
    """How many of an HdrHistogram's values (microseconds) are beyond limit_ms."""
    return sum(
        item.count_at_value_iterated_to
        for item in histogram.get_recorded_iterator()
        if item.value_iterated_to > limit_ms * 1000
    )


def merged(encoded):
    """Encoded histograms added up (one HdrHistogram)."""
    total = decoded(encoded[0])
    for more in encoded[1:]:
        total.add(decoded(more))
    return total


def decoded(encoded):
    """An HdrHistogram from the generator's encoding. hdrh is an extra, which
    bench/run.py installs for the runs that need it: imported here, not at start."""
    from hdrh.histogram import HdrHistogram

    return HdrHistogram.decode(encoded)


def run(stage, found):
    """The Capacities of every app (after the peaks, whose req/s they start from)."""
    options = stage.options
    if not options.slo:
        return {}
    runs = options.runs
    peaks = found.get("measurements", [])
    starts = []
    for target in stage.measured:
        for route in stage.routes:
            for connections in runs.connections:
                start = peak_of(peaks, target, route, connections)
                if start and start.summary.requests_per_s:
                    rps = start.summary.requests_per_s  # its deployment: "best" for --tune's
                    starts.append((target, route, connections, rps, start.deployment))
    kept = searched(stage, starts, options.slo, options.slo_step, runs.repeat)
    kept = confirmed(stage, kept, options.slo_step)
    ratios, floors = ratio_records(kept)
    return {
        "capacity": [record(s, options.slo_step) for s in kept],
        "ratios": ratios,
        "noise_floor": floors,
    }


def searched(stage, starts, objective, seconds, rounds, max_steps=MAX_STEPS, kind="capacity"):
    """The Searches of starts ([(target, route, connections, the req/s to start
    from, the deployment its records name)]), each step `seconds` long in each
    of `rounds` rounds, the apps in rotation: those whose target was still
    measured at the end."""
    searches = {
        (target.label, route.key, connections): Search(
            target, route, connections, rps, objective, rounds, deployment, max_steps
        )
        for target, route, connections, rps, deployment in starts
    }
    step_runs = dataclasses.replace(stage.context.runs, duration=seconds, repeat=rounds)
    step_stage = dataclasses.replace(
        stage, context=dataclasses.replace(stage.context, runs=step_runs)
    )

    def measure(target, step, context):
        report = offered(target, step, context)
        searches[(target.label, step.route.key, step.connections)].add(step.repeat, report)
        return report

    connections = list(dict.fromkeys(start[2] for start in starts))
    planned_rounds = planned(step_runs, stage.routes, connections, searches, max_steps, kind)
    measure_in_rotation(step_stage, planned_rounds, measure, open_loop.describe)
    return [s for s in searches.values() if s.target.measurable and s.tried]


def confirmed(stage, searches, seconds):
    """The searches, each then confirmed (Search.confirm) by runs of
    CONFIRM_STEPS x `seconds`, the apps in rotation: those whose target was
    still measured at the end."""
    by_key = {(s.target.label, s.route.key, s.connections): s for s in searches}
    for search in searches:
        search.confirm()
    runs = dataclasses.replace(stage.context.runs, duration=CONFIRM_STEPS * seconds, repeat=1)
    confirm_stage = dataclasses.replace(
        stage, context=dataclasses.replace(stage.context, runs=runs)
    )

    def measure(target, step, context):
        report = offered(target, step, context)
        by_key[(target.label, step.route.key, step.connections)].confirm(report)
        return report

    rounds = []
    for route in stage.routes:
        for connections in dict.fromkeys(s.connections for s in searches):
            for _ in range(CONFIRM_TRIES + RETRIES):

                def step(target, route=route, connections=connections):
                    search = by_key.get((target.label, route.key, connections))
                    if search is None or search.confirming is None:
                        return None
                    return Step("confirm", route, connections, search.confirming)

                rounds.append(step)
    measure_in_rotation(confirm_stage, rounds, measure, open_loop.describe)
    return [s for s in searches if s.target.measurable]


def offered(target, step, context):
    """The open loop's report of one step: step.rate offered on step.route."""
    runs = dataclasses.replace(context.runs, connections=[step.connections])
    generator = open_loop.generator(target, step.route, step.rate, runs)
    return measure_once(target, step.route, context.db, runs, context.log, generator)


def peak_of(peaks, target, route, connections):
    """The closed-loop Peak of target on route at connections, or None."""
    for found in peaks:
        if (
            (found.app, found.configuration or found.deployment) == (target.app, target.deployment)
            and found.db_delay_ms == target.db_delay * 1000
            and (found.route, found.connections) == (route.key, connections)
            and condition(found) == tuple(map(target.condition.get, ("fan_out", "upstream_delay")))
        ):
            return found
    return None


def planned(runs, routes, connections_swept, searches, max_steps, kind):
    """The rounds: per route and connection count, max_steps steps, each in
    every round; a target's step is its search's current rate (None when done)."""
    rounds = []
    for route in routes:
        for connections in connections_swept:
            for _ in range(max_steps + RETRIES):
                for repeat in range(runs.repeat):

                    def step(target, route=route, connections=connections, repeat=repeat):
                        search = searches.get((target.label, route.key, connections))
                        if search is None or search.rate is None:
                            return None
                        return Step(kind, route, connections, search.rate, repeat, runs.repeat)

                    rounds.append(step)
    return rounds


def record(search, step_seconds):
    """The search as its Capacity record."""
    everything = list(range(search.rounds))
    value = search.capacity(everything)
    ci95 = intervals.bootstrap_range(search.rounds, search.bracket)
    target = search.target
    return Capacity(
        app=target.app,
        deployment=search.deployment,
        route=search.route.key,
        connections=search.connections,
        capacity_rps=intervals.estimate(
            value,
            ci95,
            objective=search.objective.as_dict(),
            bracket=list(search.bracket(everything)),
        ),
        steps=[step_record(search, rate) for rate in search.order],
        peak_rps=search.peak_rps,
        bound=bound(search, value),
        connection_model=connection_model(search, value),
        step_seconds=step_seconds,
        confirmation=confirmation_record(search, step_seconds),
        db_delay_ms=target.db_delay * 1000,
        configuration=target.deployment if search.deployment != target.deployment else None,
        **target.condition,
    )


def step_record(search, rate):
    """A step of the search: its rounds' figures and verdict (not its confirmation's)."""
    runs = search.tried[rate]
    held = holds(runs, search.objective)
    return figures(runs, search.objective, rate, held, search.retried.get(rate))


def confirmation_record(search, step_seconds):
    """The confirmation: the capacity the search said, each run's length, its
    runs in order (their figures), and the rate that held, or None where none
    did (or the search held no rate to confirm). None for an unconfirmed search."""
    if search.searched_rps is None:
        return None
    runs = [
        figures([run], search.objective, rate, holds([run], search.objective), late)
        for rate, run in search.confirmations.items()
        for late in [search.confirm_retried.get(rate)]
    ]
    held = next((run for run in runs if run["held"]), None)
    return {
        "searched": search.searched_rps,
        "seconds": CONFIRM_STEPS * step_seconds,
        "held": held is not None,
        "rate": held and held["rate"],
        "percentile_ms": held and held["percentile_ms"],
        "runs": runs,
    }


def figures(runs, objective, rate, held, retried_ms):
    """What the record of a step (or a confirmation) says of its runs."""
    total = merged([run.histogram for run in runs])
    invalid = [run.late_ms for run in runs if not run.valid]
    return {
        "rate": rate,
        "held": held,
        "answered": sum(run.answered for run in runs),
        "failed": sum(run.failed for run in runs),
        "percentile_ms": total.get_value_at_percentile(objective.percentile) / 1000,
        "mean_ms": total.get_mean_value() / 1000,
        "rounds": len(runs),
        "round_trips": mean_of([run.round_trips for run in runs if run.round_trips]),
        "pace": pace_of(runs),
        "behind": (
            None
            if kept_pace(runs)
            else f"fell behind: {pace_of(runs):.0%} of the second half's requests answered in it"
        ),
        "invalid": (
            f"the generator was late: send lag p99 {max(invalid):,.1f} ms" if invalid else None
        ),
        "retried": (
            f"offered again: the generator was late the first time (send lag p99 "
            f"{retried_ms:,.1f} ms)"
            if retried_ms is not None
            else None
        ),
    }


def mean_of(values):
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else None


def at_capacity(search, value):
    """(rate, its runs) of the step the capacity is: its confirmation, else
    its step, else the lowest offered."""
    if value in search.confirmations:
        return value, [search.confirmations[value]]
    rate = value if value in search.tried else min(search.tried)
    return rate, search.tried[rate]


def connection_model(search, value):
    """How the open loop held its connections at the capacity's rate: how many
    it could open, how many it did, and whether they were kept alive (gunicorn's
    sync workers close every connection after its answer)."""
    _, runs = at_capacity(search, value)
    opened = sum(run.opened for run in runs)
    requests = sum(run.answered for run in runs)
    kept = opened * 2 <= requests
    words = (
        f"up to {search.connections} connections, kept alive ({opened:,} opened for "
        f"{requests:,} requests)"
        if kept
        else f"one connection per request, up to {search.connections} at once (the server "
        f"closed them: {opened:,} opened for {requests:,} requests)"
    )
    return {
        "connections": search.connections,
        "opened": opened,
        "requests": requests,
        "kept_alive": kept,
        "words": words,
    }


def unloaded_ms(search):
    """The mean time a request took from its send at the least loaded step
    (the app's own time and its waits on Postgres), or None."""
    found = [mean_of([run.service_ms for run in runs]) for runs in search.tried.values()]
    return min((ms for ms in found if ms), default=None)


def bounds(search, value):
    """{name: (req/s, how)}: what each bound allows, from what was measured.
    clients: the open loop's connections over the time a request takes
    unloaded (Little's law: the most they could carry); delay: the requests
    the app can have waiting on Postgres at once over the time each waits
    there (round trips x delay); connections: the budget over the same; CPU:
    the closed-loop peak, what the machine gave the app with every other
    bound out of the way."""
    found = {}
    unloaded = unloaded_ms(search)
    if unloaded:
        found["clients"] = (
            search.connections / (unloaded / 1000),
            f"{search.connections} connections / {unloaded:,.1f} ms a request unloaded",
        )
    record, delay_ms = search.target.record, search.target.db_delay * 1000
    trips = mean_of([run.round_trips for runs in search.tried.values() for run in runs])
    if delay_ms and trips:
        waits = trips * delay_ms / 1000
        how = f"({trips:.1f} round trips x {delay_ms:g} ms)"
        if record.in_flight and record.in_flight < (record.db_connections or 0):
            found["delay"] = (record.in_flight / waits, f"{record.in_flight} in flight / {how}")
        if record.db_connections:
            found["connections"] = (
                record.db_connections / waits,
                f"a budget of {record.db_connections} connections / {how}",
            )
    found["CPU"] = (search.peak_rps, "the closed-loop peak")
    return found


def bound(search, value):
    """The bound that binds. The closed-loop peak is where the tightest bound
    saturated: a bound within EXPLAINS of it explains it. Else, where the
    app's requests in flight are its limit, the delay binds if they spend at
    least half their time waiting on Postgres at the peak (in flight / peak
    is the time each takes; round trips x delay of it on Postgres), and the
    CPU binds otherwise. With how it was computed and how much of it the
    capacity reaches."""
    found = bounds(search, value)
    cpu = found["CPU"][0]
    others = {key: rps for key, (rps, _) in found.items() if key != "CPU"}
    name = min(others, key=others.get) if others else None
    if name is None or others[name] > cpu * EXPLAINS:
        name = "CPU"
        record = search.target.record
        if "delay" in found and cpu and record.in_flight:
            waiting = cpu / found["delay"][0]  # the share of each slot's time on Postgres
            if waiting >= 0.5:
                name = "delay"
                rps, how = found["delay"]
                found["delay"] = (
                    cpu,
                    f"{how} = {rps:,.0f} req/s at most; at the closed-loop peak each request "
                    f"spent {waiting:.0%} of its time waiting on Postgres",
                )
    rps, how = found[name]
    share = value / rps if rps else 0.0
    return {
        "name": name,
        "rps": rps,
        "why": f"{how}: {rps:,.0f} req/s; capacity {share:.0%} of it",
        "all": {key: rps for key, (rps, _) in found.items()},
    }


def arms_of(searches):
    """The A/A pairs among searches: (arm 1, arm 2) of an app named twice, per
    route, connection count and deployment."""
    by_key = {}
    for search in searches:
        slot = search.target.slot
        if slot is not None and slot.arm:
            key = (slot.app, search.deployment, search.route.key, search.connections)
            key += (search.target.db_delay, *search.target.condition.values())
            by_key.setdefault(key, {})[slot.arm] = search
    return [(pair[1], pair[2]) for pair in by_key.values() if set(pair) == {1, 2}]


def compared(numerator, denominator):
    """The paired estimate of one search's capacity over another's, over rounds."""
    rounds = min(numerator.rounds, denominator.rounds)
    return intervals.paired_range_ratio(rounds, numerator.bracket, denominator.bracket)


def ratio_records(searches):
    """(every app's capacity to the baseline's, the A/A floors): per deployment,
    route and connection count, each with its 95 % interval over rounds."""
    floors = []
    for first, second in arms_of(searches):
        floor = compared(second, first)
        floors.append(
            {**where(second), "app": second.target.app, "baseline": first.target.app, **floor}
        )
    groups = {}
    for search in searches:
        key = (search.deployment, search.target.db_delay, search.route.key, search.connections)
        key += tuple(search.target.condition.values())
        groups.setdefault(key, []).append(search)
    ratios = []
    for group in groups.values():
        base = baseline_app([s.target.app for s in group])
        [base_search] = [s for s in group if s.target.app == base]
        floor = floor_for(floors, where(base_search))
        for search in group:
            if search is base_search:
                continue
            found = compared(search, base_search)
            ratios.append(
                {
                    **where(search),
                    "app": search.target.app,
                    "baseline": base,
                    "metric": "capacity",
                    **found,
                    "measurable": intervals.measurable(found, floor),
                }
            )
    return ratios, floors


def where(search):
    """Where a search ran, as its ratio records name it (the ratings route's
    sources too, when it has them)."""
    return {
        "deployment": search.deployment,
        "route": search.route.key,
        "db_delay_ms": search.target.db_delay * 1000,
        "connections": search.connections,
        **search.target.condition,
    }
