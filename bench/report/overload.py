"""The overload mode's section of the report (bench/modes/overload.py): per
deployment, database delay, route and connection count, one table per app
of what came back when it was offered multiples of its own capacity. A view
of the records: no mode imported."""

from bench.report.tables import condition_words, delay_words, estimate_cell, number, table, where
from bench.routes import ROUTES

HEADER = [
    "x capacity",
    "offered req/s",
    "goodput req/s (95% interval)",
    "share",
    "late 2xx/s",
    "503/s",
    "other errors/s",
    "503 p50 / p99, ms",
    "generator",
]
ERRORS = ("other_status", "timeout", "socket", "not_sent", "connect")


def errors_cell(found):
    """Every error but the 503s, per second, and by kind where there are any."""
    errors = found.errors_rps
    total = sum(errors.get(kind, 0.0) for kind in ERRORS)
    kinds = [f"{kind} {errors[kind]:,.1f}" for kind in ERRORS if errors.get(kind)]
    return f"{total:,.1f}" + (f" ({', '.join(kinds)})" if kinds else "")


def refusal_cell(found):
    """How fast the 503s came back, and the share that carried Retry-After."""
    if not found.refusal_ms:
        return "-"
    cell = f"{found.refusal_ms['p50']:,.1f} / {found.refusal_ms['p99']:,.1f}"
    if found.retry_after is not None:
        cell += f" (Retry-After: {found.retry_after:.0%})"
    return cell


def generator_cell(found):
    """Whether the open loop kept its schedule, and the server its pace."""
    words = "kept" if found.kept_schedule else f"late: p99 {found.send_lag_p99_ms:,.1f} ms"
    if found.pace is not None:
        words += f"; pace {found.pace:.0%}"
    return words


# On the ratings route: what was asked of its sources at the runs' worst.
SOURCES_HEADER = "ratings asked at once, most"


def row(found):
    share = found.goodput_rps["value"] / found.offered_rps if found.offered_rps else None
    sources = [] if found.fan_out is None else [number(found.sources_in_flight, "{:,}")]
    return [
        f"{found.multiple:g}",
        f"{found.offered_rps:,.0f}",
        estimate_cell(found.goodput_rps),
        number(share, "{:.0%}"),
        f"{found.late_rps:,.1f}",
        f"{found.refused_rps:,.1f}",
        errors_cell(found),
        refusal_cell(found),
        generator_cell(found),
        *sources,
    ]


def curves(found):
    """(place, app, its records by multiple) for each app at each place
    (tables.where) of the overload records found, in the run's order."""
    for group in dict.fromkeys(where(o) for o in found):
        here = [o for o in found if where(o) == group]
        for app in dict.fromkeys(o.app for o in here):
            yield group, app, sorted((o for o in here if o.app == app), key=lambda o: o.multiple)


def section(results):
    """Goodput past capacity: per place, one table per app, by multiple."""
    found = results.overload
    if not found:
        return []
    objective = results.objective or {}
    p, ms = objective.get("percentile", 99), objective.get("ms")
    first = found[0]
    lines = [
        f"## Goodput past capacity (p{p:g} <= {ms:g} ms)",
        "",
        "Each app offered multiples of its own confirmed capacity by the open loop, "
        f"{first.runs} run(s) of {first.seconds} s per multiple in rotation. Per second of the "
        f"schedule: goodput, the 2xx answered within {ms:g} ms of each request's due time "
        "(95 % interval over the runs), and its share of the rate offered; the 2xx later "
        "than that; the 503 refusals, and how fast they came; every other error (other "
        "statuses, timeouts, resets, requests that found no connection, refused "
        "connections); whether the generator kept its schedule, and the server's pace (its "
        "answers in each run's second half over the requests due in it).",
        "",
    ]
    for (deployment, delay, route, connections, *_), app, rows in curves(found):
        lines += [
            f"### {app}, {ROUTES[route].label}, {deployment} deployment, {connections} "
            f"connections{delay_words(delay, ', ')}{condition_words(rows[0], ', ')}: "
            f"capacity {rows[0].capacity_rps:,.0f} req/s",
            "",
            table(HEADER + [SOURCES_HEADER] * (rows[0].fan_out is not None), list(map(row, rows))),
            "",
        ]
    return lines
