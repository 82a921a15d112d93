"""The tables every report has, per deployment and connection count: the
article-style ratio table (each app to Flask, and to the pgbench ceiling) and
the latency table; and the Markdown helpers the other sections share."""

from bench import intervals
from bench.routes import ROUTES
from bench.sut import cost

# Where a record was measured, but for the app: the cells a table has one row
# of each app in (the ratings route's sources too, None for other routes).
WHERE = ("deployment", "db_delay_ms", "route", "connections", "fan_out", "upstream_delay")


def where(record):
    """WHERE's values of a record, or of a dict (a ratio, a floor)."""
    if isinstance(record, dict):
        return tuple(record.get(key) for key in WHERE)
    return tuple(getattr(record, key, None) for key in WHERE)


def estimate_cell(estimate, unit=""):
    """{"value", "ci95"} as "12.5 (10.0-15.0)", the unit after the value."""
    cell = f"{estimate['value']:,.1f}{unit}"
    if estimate.get("ci95"):
        low, high = estimate["ci95"]
        cell += f" ({low:,.1f}-{high:,.1f})"
    return cell


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def number(value, fmt="{:,.0f}"):
    return "-" if value is None else fmt.format(value)


def delays(results):
    """The database delays of the run's peaks, in run order (ms)."""
    return list(dict.fromkeys(peak.db_delay_ms for peak in results.measurements))


def delay_words(delay, before=""):
    """How far Postgres was, for a heading: nothing when direct."""
    return f"{before}database +{delay:g} ms per round trip" if delay else ""


def condition(record):
    """The ratings route's condition of a record: (sources per request, their
    delay as written), (None, None) for every other route."""
    return getattr(record, "fan_out", None), getattr(record, "upstream_delay", None)


def condition_words(record, before=""):
    """Its rating sources, for a heading: nothing without them."""
    count, delay = condition(record)
    return f"{before}{count} source(s) each {delay} away" if count else ""


def memory_cell(rest, ends):
    """An app's PSS in MiB (bench/sut/memory.py) at rest -> the largest at
    the end of its runs: what it holds idle, and what the load added. "-"
    where not measured (a server started elsewhere, a file older than PSS)."""
    end = max((value for value in ends if value is not None), default=None)
    if rest is None and end is None:
        return "-"
    return f"{number(rest)} -> {number(end)}"


def started_as(record):
    """Which start of an app a record belongs to: app, deployment (for
    --tune's "best", the configuration chosen), delay, rating sources."""
    deployment = getattr(record, "configuration", None) or record.deployment
    return record.app, deployment, record.db_delay_ms, *condition(record)


def rest_of(apps, record):
    """The PSS at rest of the app a Peak or Rate measured, from the AppRuns."""
    found = (app.pss_rest_mib for app in apps if started_as(app) == started_as(record))
    return next(found, None)


def cpu_cells(parts):
    """CPU µs per request of the parts that serve it, and of the app alone
    (bench/sut/cost.py; "-" where not measured: a file older than it)."""
    if not parts:
        return ["-", "-"]
    return [number(cost.serving(parts), "{:,.0f}"), number(parts.get("app"), "{:,.0f}")]


CPU_HEADER = ["CPU µs/req", "app µs/req"]  # cpu_cells' (the parts: the CPU section)


def baseline_app(apps):
    """Ratios are to Flask, the app the article migrates from; else the first."""
    return "flask" if "flask" in apps else apps[0]


def requests_cell(summary):
    """Median req/s, its min-max when repeated, and any error beside it."""
    cell = f"{summary.requests_per_s:,.0f}"
    if summary.runs > 1:
        cell += f" ({summary.requests_per_s_min:,.0f}-{summary.requests_per_s_max:,.0f})"
    flags = []
    if summary.socket_errors:
        flags.append(f"{summary.socket_errors} socket errors")
    if summary.non_2xx:
        flags.append(f"{summary.non_2xx} non-2xx")
    return cell + (f" [{', '.join(flags)}]" if flags else "")


def paired_ratios(runs, base_runs):
    """Each repeat's ratio of req/s: apps run in rotation, so the two runs of
    one repeat were measured minutes apart at most, under the same drift."""
    return [
        run["requests_per_s"] / base["requests_per_s"]
        for run, base in zip(runs, base_runs, strict=False)
        if base["requests_per_s"]
    ]


def ratio_interval(runs, base_runs):
    """The 95 % interval of the ratio of mean req/s, bootstrapped over the
    repeats (each a round of the rotation, paired by index), or None for one."""
    rounds = min(len(runs), len(base_runs))

    def mean(found):
        return lambda drawn: sum(found[i]["requests_per_s"] for i in drawn) / len(drawn)

    return intervals.bootstrap(
        rounds, lambda drawn: intervals.ratio(mean(runs)(drawn), mean(base_runs)(drawn))
    )


def spread(values):
    """(lowest, highest) of two or more values, else None."""
    return (min(values), max(values)) if len(values) > 1 else None


def ratio_rows(peaks, ceilings, apps, routes):
    """One row per route: req/s per app, each app's ratio to the baseline (of
    the medians) with its spread (the lowest and highest ratio of one repeat),
    the pgbench ceiling and each app's share of it. Missing figures are None."""
    base = baseline_app(apps)
    by_key = {(peak.app, peak.route): peak for peak in peaks}
    ceiling = {c.route: c.tps for c in ceilings}
    rows = []
    for route in routes:
        found = {app: by_key.get((app, route)) for app in apps}
        summaries = {app: peak.summary if peak else None for app, peak in found.items()}
        runs = {app: peak.runs if peak else [] for app, peak in found.items()}
        rates = {app: s.requests_per_s if s else None for app, s in summaries.items()}
        rows.append(
            {
                "route": route,
                "summaries": summaries,
                "requests_per_s": rates,
                "ratio": {
                    app: rate / rates[base] if rate and rates[base] else None
                    for app, rate in rates.items()
                    if app != base
                },
                "ratio_spread": {
                    app: spread(paired_ratios(runs[app], runs[base])) for app in apps if app != base
                },
                "ratio_ci95": {
                    app: ratio_interval(runs[app], runs[base]) for app in apps if app != base
                },
                "pgbench_tps": ceiling.get(route),
                "share_of_ceiling": {
                    app: rate / ceiling[route] if rate and ceiling.get(route) else None
                    for app, rate in rates.items()
                },
            }
        )
    return rows


def ratio_cell(ratio, ratio_spread, ci95=None):
    """The ratio with its bootstrap 95 % interval over repeats ("no measurable
    difference" when it holds 1), else the spread of its repeats."""
    if ratio is not None and ci95:
        return intervals.words(intervals.estimate(ratio, ci95))
    cell = number(ratio, "{:.2f}x")
    if ratio is not None and ratio_spread:
        cell += f" ({ratio_spread[0]:.2f}-{ratio_spread[1]:.2f})"
    return cell


def ratio_table(peaks, ceilings, apps, routes):
    """The article-style table, as Markdown."""
    base = baseline_app(apps)
    others = [app for app in apps if app != base]
    header = (
        ["route"]
        + [f"{app} req/s" for app in apps]
        + [f"{app}/{base}" for app in others]
        + ["pgbench tps"]
        + [f"{app} % of pgbench" for app in apps]
    )
    rows = []
    for row in ratio_rows(peaks, ceilings, apps, routes):
        summaries = row["summaries"]
        rows.append(
            [ROUTES[row["route"]].label]
            + [requests_cell(summaries[app]) if summaries[app] else "not measured" for app in apps]
            + [
                ratio_cell(row["ratio"][app], row["ratio_spread"][app], row["ratio_ci95"][app])
                for app in others
            ]
            + [number(row["pgbench_tps"])]
            + [number(row["share_of_ceiling"][app], "{:.0%}") for app in apps]
        )
    return table(header, rows)


def latency_table(peaks, apps):
    """One row per app and route: req/s, latency, errors, the app's memory
    (PSS at rest -> end, from apps: the run's AppRuns) and a POST's books."""
    header = [
        "app",
        "route",
        "req/s",
        "mean ms",
        "p50",
        "p90",
        "p99",
        "max",
        "socket errors",
        "non-2xx",
        "PSS MiB rest -> end",
        *CPU_HEADER,
        "rows added / 2xx (in flight), all runs",
    ]
    rows = []
    for peak in peaks:
        summary, latency, ledger = peak.summary, peak.summary.latency_ms, peak.ledger
        if ledger:
            books = f"{ledger['rows_added']} / {ledger['responses_2xx']} ({ledger['in_flight']})"
        else:
            books = "-" if peak.route != "review" else "not checked (no database)"
        rows.append(
            [peak.app, ROUTES[peak.route].label, requests_cell(summary)]
            + [f"{latency[key]:.1f}" for key in ("mean", "p50", "p90", "p99", "max")]
            + [str(summary.socket_errors), str(summary.non_2xx)]
            + [memory_cell(rest_of(apps, peak), [peak.pss_mib])]
            + cpu_cells(peak.cpu_us_per_request)
            + [books]
        )
    return table(header, rows)


def sections(results):
    """(deployment, connections, delay, peaks, ceilings, apps measured) in run
    order: one section of the report, one row of the chart, each (a ratings
    route's condition, condition() of its peaks, a section of its own)."""

    def key(p):
        return p.deployment, p.connections, p.db_delay_ms, condition(p)

    for deployment, connections, delay, fan_out in dict.fromkeys(map(key, results.measurements)):
        peaks = [
            p for p in results.measurements if key(p) == (deployment, connections, delay, fan_out)
        ]
        apps = list(dict.fromkeys(p.app for p in peaks))
        base = baseline_app(apps)
        apps.sort(key=lambda app: app != base)  # the baseline first
        ceilings = [
            c for c in results.pgbench if (c.connections, c.db_delay_ms) == (connections, delay)
        ]
        yield deployment, connections, delay, peaks, ceilings, apps
