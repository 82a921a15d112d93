"""The spike mode's section of the report (bench/modes/spike.py): per
deployment, database delay, route and connection count, one table per app:
each phase's goodput, refusals and errors, and the recovery after the spike.
A view of the records: no mode imported."""

from bench.report.tables import condition_words, delay_words, estimate_cell, table, where
from bench.routes import ROUTES

HEADER = [
    "phase",
    "x capacity",
    "offered req/s",
    "goodput req/s (95% interval)",
    "503/s",
    "other errors/s",
]


def recovery_words(found):
    """The recovery, as the prose says it: "3.0 s (2.0-4.0)", "not recovered", ..."""
    estimate = found.recovery_s
    runs = estimate["runs"]
    never = sum(run is None for run in runs)
    if estimate["value"] is None:
        return f"not recovered ({never} of {len(runs)} runs did not)"
    words = f"{estimate['value']:g} s"
    if estimate.get("ci95"):
        low, high = estimate["ci95"]
        high = "not recovered" if high is None else f"{high:g} s"
        words += f" (95% interval {low:g} s to {high})"
    else:
        words += " (1 run: no interval)"
    if never:
        words += f"; {never} of {len(runs)} runs did not recover"
    return words


def phase_name(found, index):
    if index == found.spike:
        return "spike"
    return "before" if index < found.spike else "after"


def rows(found):
    return [
        [
            f"{phase_name(found, index)}, {phase['seconds']} s",
            f"{phase['multiple']:g}",
            f"{phase['rate']:,.0f}",
            estimate_cell(found.goodput_rps[index]),
            f"{found.refused_rps[index]:,.1f}",
            f"{found.errors_rps[index]:,.1f}",
        ]
        for index, phase in enumerate(found.phases)
    ]


def section(results):
    """A spike and the recovery: per place, one table per app, by phase."""
    found = results.spike
    if not found:
        return []
    objective = results.objective or {}
    p, ms = objective.get("percentile", 99), objective.get("ms")
    lines = [
        f"## A spike and the recovery (p{p:g} <= {ms:g} ms)",
        "",
        f"Each app offered a step load of multiples of its own confirmed capacity by the open "
        f"loop, {found[0].runs} run(s) in rotation. Per phase, per second: goodput, the 2xx "
        f"answered within {ms:g} ms of each request's due time (95 % interval over the runs); "
        "the 503 refusals; every other error (other statuses, timeouts, resets, requests that "
        f"found no connection). A second keeps the objective when at most {100 - p:g} % of the "
        f"requests due in it were not answered 2xx within {ms:g} ms; the **recovery** is the "
        "time after the spike's end from which every second kept it, to the end (median run; "
        "whole seconds). RUN-spike.png draws each second.",
        "",
    ]
    for group in dict.fromkeys(where(s) for s in found):
        deployment, delay, route, connections, *_ = group
        for spike in (s for s in found if where(s) == group):
            late = (
                ""
                if spike.kept_schedule
                else (
                    f" The generator was late (send lag p99 {spike.send_lag_p99_ms:,.1f} ms): "
                    "the seconds may show its lateness."
                )
            )
            lines += [
                f"### {spike.app}, {ROUTES[route].label}, {deployment} deployment, {connections} "
                f"connections{delay_words(delay, ', ')}{condition_words(spike, ', ')}: "
                f"capacity {spike.capacity_rps:,.0f} req/s",
                "",
                f"Recovery: {recovery_words(spike)}.{late}",
                "",
                table(HEADER, rows(spike)),
                "",
            ]
    return lines
