"""The capacity mode's section of the report (bench/modes/capacity/): per
deployment, database delay, route and connection count, the apps ranked by
capacity at the objective, each with its 95 % interval, its ratio to the
baseline (words from bench/intervals.py), closed-loop req/s as a secondary
column, the bound that binds, the open loop's connection model, the A/A
floor and each search's steps. A view of the records: no mode imported."""

from bench import intervals
from bench.report.tables import (
    baseline_app,
    condition_words,
    delay_words,
    number,
    table,
    where,
)
from bench.routes import ROUTES


def floor_for(floors, record):
    """The A/A floor measured beside record (a dict or a record): in its
    deployment (--proxy both measures two), else at the same place but for the
    deployment; or None."""
    exact = (f for f in floors if where(f) == where(record))
    near = (f for f in floors if where(f)[1:] == where(record)[1:])
    return next(exact, None) or next(near, None)


HEADER = [
    "app",
    "capacity req/s (95% interval)",
    "x {base}",
    "closed-loop 2xx req/s",
    "p{p:g} at capacity, ms",
    "confirmed: p{p:g} over its run",
    "bound that binds",
    "open loop's connections",
]


def capacity_cell(found):
    estimate = found.capacity_rps
    cell = f"{estimate['value']:,.0f}"
    if estimate.get("ci95"):
        low, high = estimate["ci95"]
        cell += f" ({low:,.0f}-{high:,.0f})"
    if found.confirmation and found.confirmation["runs"] and not found.confirmation["held"]:
        cell += " (not confirmed)"
    return cell


def percentile_at(found):
    value = found.capacity_rps["value"]
    step = next((s for s in found.steps if s["rate"] == value), None)
    return number(step["percentile_ms"], "{:,.1f}") if step else "-"


def confirmed_cell(found):
    """The confirmation beside the capacity: its percentile and length, the
    rates it stepped down from; "-" for a file from before confirmations."""
    confirmation = found.confirmation
    if not confirmation:
        return "-"
    runs, seconds = confirmation["runs"], confirmation["seconds"]
    if not runs:
        return "no rate to confirm"
    if confirmation["held"]:
        cell = f"{confirmation['percentile_ms']:,.1f} ms over {seconds:g} s"
    else:
        cell = f"not confirmed: {len(runs)} runs of {seconds:g} s broke"
    broke = [run for run in runs if not run["held"]]
    if broke and confirmation["held"]:
        cell += "; down from " + ", ".join(
            f"{run['rate']:,.0f} ({run['percentile_ms']:,.1f} ms)" for run in broke
        )
    return cell


def verdict(step):
    """held or broke, and why it broke where the percentile does not say."""
    words = "held" if step["held"] else "broke"
    if step["invalid"]:
        words = f"invalid ({step['invalid']})"
    elif step["failed"]:
        words += f", {step['failed']:,} failed"
    elif step.get("behind"):
        words += f", {step['behind']}"
    if step.get("retried"):
        words += " (offered twice: the generator was late the first time)"
    return words


def trail(found):
    """The search's steps: rate, its merged percentile, held or not."""
    words = [f"{s['rate']:,.0f}: {s['percentile_ms']:,.1f} ms {verdict(s)}" for s in found.steps]
    confirmation = found.confirmation
    if confirmation and confirmation["runs"]:
        runs = confirmation["runs"]
        words[-1] += f"; then confirmed over {confirmation['seconds']:g} s: " + "; ".join(
            f"{run['rate']:,.0f}: {run['percentile_ms']:,.1f} ms {verdict(run)}" for run in runs
        )
    return "; ".join(words)


def section(results):
    """Capacity at the objective, per deployment, database delay, route and
    connection count: the apps ranked by it, with the A/A floor beside."""
    found = results.capacity
    if not found:
        return []
    objective = found[0].capacity_rps["objective"]
    p = objective["percentile"]
    floors = results.noise_floor or []
    lines = [
        f"## Capacity at p{p:g} <= {objective['ms']:g} ms",
        "",
        "The most requests/s the open loop offered with the p"
        f"{p:g} latency (from each request's due time) within {objective['ms']:g} ms and no error: "
        f"bracketed and bisected from the closed-loop peak, {found[0].step_seconds}s per step "
        f"and round, {results.wrk['repeat']} round(s) in rotation, each step's verdict from the "
        "rounds' merged histograms; 95 % interval: a bootstrap over the rounds. Ratios inside "
        'their interval or the A/A floor read "no measurable difference".',
        "",
    ]
    confirmation = next((c.confirmation for c in found if c.confirmation), None)
    if confirmation:
        lines[-1:] = [
            f"Each capacity then confirmed: offered again for {confirmation['seconds']:g} s in "
            "one run, it must hold, else it steps down by the search's resolution until one "
            "does (the highest of short, noisy steps that held is biased upward).",
            "",
        ]
    groups = dict.fromkeys(where(c) for c in found)
    # What the closed loop got answered 2xx: a limit's refusals are not the app's rate.
    closed = {(m.app, *where(m)): m.summary.ok_per_s for m in results.measurements}
    for group in groups:
        deployment, delay, route, connections, *_ = group
        here = [c for c in found if where(c) == group]
        base = baseline_app([c.app for c in here])  # in the run's order: flask, or the first
        here.sort(key=lambda c: -c.capacity_rps["value"])
        floor = floor_for(floors, here[0])
        ratios = {r["app"]: r for r in results.ratios if where(r) == group}
        lines += [
            f"### {ROUTES[route].label}, {deployment} deployment, {connections} connections"
            f"{delay_words(delay, ', ')}{condition_words(here[0], ', ')}",
            "",
        ]
        rows = []
        for c in here:
            rows.append(
                [
                    c.app,
                    capacity_cell(c),
                    "1" if c.app == base else intervals.words(ratios.get(c.app), floor),
                    number(closed.get((c.app, *where(c)))),
                    percentile_at(c),
                    confirmed_cell(c),
                    f"{c.bound['name']}: {c.bound['why']}" if c.bound else "-",
                    c.connection_model["words"] if c.connection_model else "-",
                ]
            )
        header = [h.format(base=base, p=p) for h in HEADER]
        lines += [table(header, rows), ""]
        if floor:
            lines += [
                f"A/A noise floor ({floor['app']} / {floor['baseline']}, the same app as two "
                f"arms of this rotation): {intervals.words(floor)}.",
                "",
            ]
        lines += [f"- {c.app}'s search (req/s offered: merged p{p:g}): {trail(c)}" for c in here]
        lines.append("")
    return lines
