"""A search as its Capacity record, and the capacities' ratios to the
baseline's with their intervals (and the A/A floors)."""

from bench import intervals
from bench.modes.capacity.bounds import bound, connection_model
from bench.modes.capacity.search import CONFIRM_STEPS
from bench.modes.capacity.verdict import holds, kept_pace, mean_of, merged, pace_of
from bench.records import Capacity
from bench.report.capacity import floor_for
from bench.report.tables import baseline_app


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
