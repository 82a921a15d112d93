"""Every search driven in rotation (bench/rotation.py): the steps, each in
every round, then the confirmations; each step one open-loop run."""

import dataclasses
from dataclasses import dataclass

from bench.load.measure import measure_once
from bench.modes import open_loop
from bench.modes.capacity.search import CONFIRM_STEPS, CONFIRM_TRIES, MAX_STEPS, Search
from bench.options import Objective
from bench.report.tables import condition
from bench.rotation import Step, measure_in_rotation

RETRIES = 2  # the rounds' room for steps offered again, beyond max_steps


@dataclass(frozen=True)
class Stepping:
    """How the searches step: at the objective, each step `seconds` long in
    each of `rounds` rounds, at most `most` steps each, counted by Progress
    as `kind` (the capacity's, or --tune's trials: "search")."""

    objective: Objective
    seconds: float
    rounds: int = 1
    most: int = MAX_STEPS
    kind: str = "capacity"


def searched(stage, starts, stepping):
    """The Searches of starts ([(target, route, connections, the req/s to start
    from, the deployment its records name)]), stepping as it says, the apps in
    rotation: those whose target was still measured at the end."""
    objective, rounds, most = stepping.objective, stepping.rounds, stepping.most
    searches = {
        (target.label, route.key, connections): Search(
            target, route, connections, rps, objective, rounds, deployment, most
        )
        for target, route, connections, rps, deployment in starts
    }
    step_runs = dataclasses.replace(stage.context.runs, duration=stepping.seconds, repeat=rounds)
    step_stage = dataclasses.replace(
        stage, context=dataclasses.replace(stage.context, runs=step_runs)
    )

    def measure(target, step, context):
        report = offered(target, step, context)
        searches[(target.label, step.route.key, step.connections)].add(step.repeat, report)
        return report

    connections = list(dict.fromkeys(start[2] for start in starts))
    planned_rounds = planned(step_runs, stage.routes, connections, searches, most, stepping.kind)
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
