"""The database-delay sweep (--db-delay D,... or -c N,...): when async pays.
Every app, and pgbench, reaches Postgres through a delay proxy of its own
(bench/sut/delay_proxy.py), once per delay: its sweep() is the outermost of
the run's stages (bench/run.py), so the whole plan repeats per delay. Its
section: each app at every delay and connection count,
with its memory, the connections it held, its round trips per request and the
bound Little's law sets, after the decision table (each app at its best per
delay and connection count); its charts, the decision (bench/report/charts/
decision.py) and req/s and p99 against the swept axis."""

from bench.modes.mode import Mode
from bench.parsers import delay_list
from bench.progress import say
from bench.report.select import best, capacity_of
from bench.report.tables import delays, memory_cell, number, requests_cell, table
from bench.routes import ROUTES

DELAY_PROXY = (
    "--db-delay D: each app, and pgbench, reaches Postgres through a TCP proxy of its "
    "own (bench/sut/delay_proxy.py) that holds every chunk D/2 in each direction, so each "
    "round trip waits D more, as a database on another host would; 0 is direct, "
    "no proxy."
)


INTRO = (
    "Each app at every database delay (rows) and wrk connection count: req/s, p99, "
    "the most connections it held (pg_stat_activity), and the bound its concurrency "
    "sets: requests in flight / (round trips per request x delay), in flight being "
    "the least of wrk's connections, the app's processes x threads where a request "
    "holds its thread (sync or threaded workers), and its pools. Round trips: the writes it sent "
    "Postgres through the delay proxy per answer. PSS: the app's memory at rest -> the "
    "largest at the end of the row's runs."
)


def held(peak):
    """The most connections the app held in any of its runs (pg_stat_activity)."""
    values = [r["connections_held"] for r in peak.runs if r.get("connections_held")]
    return max(values, default=None)


def round_trips(peak):
    """Round trips per answered request, through the delay proxy (median run)."""
    values = sorted(
        r["round_trips_per_request"] for r in peak.runs if r.get("round_trips_per_request")
    )
    return values[len(values) // 2] if values else None


def bound(peak, app_run):
    """(req/s, requests in flight): what the app cannot exceed with its
    database db_delay_ms away (Little's law): the requests it can have waiting
    on Postgres at once (the least of wrk's connections, its processes x
    threads where a request holds its thread, and its pools, as they ran),
    over the time each request spends in round trips. None when direct or
    not measured."""
    delay, trips = peak.db_delay_ms, round_trips(peak)
    if not delay or not trips or app_run is None or not app_run.in_flight:
        return None
    in_flight = min(peak.connections, app_run.in_flight)
    return in_flight / (trips * delay / 1000), in_flight


# A measurement this far over its bound says the model is wrong (the
# configuration it was computed from is not the one that ran), not the app.
OVER_BOUND = 1.1


def bound_cell(limit, requests_per_s):
    if not limit:
        return "-"
    reached = requests_per_s / limit[0]
    if reached > OVER_BOUND:
        return f"{limit[0]:,.0f} ({limit[1]} in flight): exceeded, the model is wrong"
    return f"{limit[0]:,.0f} ({limit[1]} in flight), {reached:.0%}"


def proxy_share(run):
    """The share of one core the delay proxy took over a run, or None: from
    its CPU accounting (bench/sut/cost.py), or as older files state it."""
    cpu = run.get("cpu")
    if cpu and "delay_proxy" in cpu["cpu_s"] and cpu["window_s"]:
        return cpu["cpu_s"]["delay_proxy"] / cpu["window_s"]
    return run.get("proxy_cpu_share")


def proxy_cpu(peaks):
    """The line on the most CPU the delay proxy took, or []."""
    shares = [
        (proxy_share(r), p.app, p.db_delay_ms)
        for p in peaks
        for r in p.runs
        if proxy_share(r) is not None
    ]
    if not shares:
        return []
    share, app, delay = max(shares)
    return [
        f"The delay proxy took at most {share:.0%} of one core ({app}, +{delay:g} ms): "
        "CPU the app and Postgres did not have.",
        "",
    ]


def decision(results):
    """Per route, the decision table: each app (rows, at every delay) at its
    best per connection count: req/s, p99 and the configuration that did it;
    [] unless several delays were measured."""
    if len(delays(results)) < 2:
        return []
    counts = sorted({p.connections for p in results.measurements})
    by_capacity = bool(results.capacity)
    header = ["app", "DB delay"]
    for count in counts:
        header += [f"c={count} best capacity"] if by_capacity else []
        header += [f"c={count} best req/s", "p99 ms", "configuration"]
    lines = [
        "### The decision: each app at its best",
        "",
        "Per app, database delay and connection count, the configuration (deployment) "
        + (
            "with the most capacity at the objective (its 95 % interval; closed-loop req/s "
            "and p99 beside it)."
            if by_capacity
            else "of the run with the most req/s, and its p99."
        ),
        "",
    ]
    for route in results.wrk["routes"]:
        winners = best(results, route)
        rows = []
        for app in dict.fromkeys(a.app for a in results.apps):
            for delay in delays(results):
                cells = []
                for count in counts:
                    peak = winners.get((app, delay, count))
                    if by_capacity:
                        cells.append(capacity_words(capacity_of(results, peak) if peak else None))
                    cells += (
                        [
                            requests_cell(peak.summary),
                            f"{peak.summary.latency_ms['p99']:,.1f}",
                            peak.configuration or peak.deployment,
                        ]
                        if peak
                        else ["-", "-", "-"]
                    )
                if any(cell != "-" for cell in cells):
                    rows.append([app, f"{delay:g} ms", *cells])
        if rows:
            lines += [f"#### {ROUTES[route].label}", "", table(header, rows), ""]
    return lines


def capacity_words(found):
    """A capacity and its interval, for a cell."""
    if not found:
        return "-"
    ci95 = found.get("ci95")
    interval = f" ({ci95[0]:,.0f}-{ci95[1]:,.0f})" if ci95 else ""
    return f"{found['value']:,.0f}{interval}"


def section(results):
    """Per deployment and route, each app at every database delay (rows) and
    connection count (columns): req/s, p99, the connections it held and, with
    a delay, the bound its concurrency sets; [] when nothing was swept."""
    peaks = [p for p in results.measurements if not p.fan_out]  # fan_out.py's
    counts = sorted({p.connections for p in peaks})
    if len(delays(results)) < 2 and len(counts) < 2:
        return []
    app_runs = {(a.app, a.deployment, a.db_delay_ms): a for a in results.apps}
    by_key = {(p.app, p.deployment, p.db_delay_ms, p.route, p.connections): p for p in peaks}
    header = ["app", "DB delay", "round trips", "PSS MiB rest -> end"]
    for count in counts:
        header += [f"c={count} req/s", "p99 ms", "held", "bound (in flight), reached"]
    lines = ["## When async pays: database delay x connections", ""]
    lines += decision(results)
    lines += [INTRO, ""]
    lines += proxy_cpu(peaks)
    for deployment in dict.fromkeys(p.deployment for p in peaks):
        for route in results.wrk["routes"]:
            rows = []
            for app in dict.fromkeys(a.app for a in results.apps):
                for delay in delays(results):
                    cells, trips, ends = [], None, {}
                    for count in counts:
                        peak = by_key.get((app, deployment, delay, route, count))
                        if not peak:
                            cells += ["-", "-", "-", "-"]
                            continue
                        trips = trips or round_trips(peak)
                        ran = (app, peak.configuration or deployment, delay)  # --tune: the chosen
                        ends.setdefault(ran, []).append(peak.pss_mib)
                        limit = bound(peak, app_runs.get(ran))
                        cells += [
                            requests_cell(peak.summary),
                            f"{peak.summary.latency_ms['p99']:,.1f}",
                            number(held(peak)),
                            bound_cell(limit, peak.summary.requests_per_s),
                        ]
                    if any(cell != "-" for cell in cells):
                        memory = memory_of(ends, app_runs)
                        rows.append([app, f"{delay:g} ms", number(trips, "{:.1f}"), memory, *cells])
            if rows:
                lines += [f"### {deployment}: {ROUTES[route].label}", "", table(header, rows), ""]
    return lines


def memory_of(ends, app_runs):
    """A row's memory cell: rest -> end of the configuration that ran; under
    --tune, each configuration chosen in the row by name, where the best
    differs between connection counts."""
    cells = []
    for ran, values in ends.items():
        app_run = app_runs.get(ran)
        cells.append((ran[1], memory_cell(app_run.pss_rest_mib if app_run else None, values)))
    if len(cells) == 1:
        return cells[0][1]
    return "; ".join(f"{cell} ({configuration})" for configuration, cell in cells)


def options(group):
    group.add_argument(
        "--db-delay",
        dest="db_delays",
        type=delay_list,
        default=(0.0,),
        metavar="D[,D...]",
        help="add D to every round trip between each app (and pgbench) and Postgres, "
        "through a delay proxy of its own (bench/sut/delay_proxy.py): e.g. 0,1ms,5ms,20ms runs "
        "everything once per delay; 0 is direct (default 0)",
    )


def refused(options):
    """Why its option cannot run with the others, or None."""
    if any(options.db_delays) and options.target:
        return "--db-delay puts a proxy between the apps it starts and Postgres: not with --target"
    if max(options.db_delays) >= options.runs.timeout:
        return "--db-delay: every request would wait on Postgres longer than --timeout"
    return None


def recorded(options):
    """The delays swept, in ms, and how they were added, when the run added one."""
    delays = {"db_delays_ms": [delay * 1000 for delay in options.db_delays]}
    return {**delays, "delay_proxy": DELAY_PROXY} if any(options.db_delays) else delays


def conditions(options):
    """One condition per database delay; nothing to start for it (each app's
    delay proxy starts with the app: bench/sut/targets.py)."""
    return len(options.db_delays), {}


def sweep(options, _sweeping):
    """Each database delay in turn, the outermost sweep: the stage's delay."""
    for delay in options.db_delays:
        if len(options.db_delays) > 1 or delay:
            say(f"database {delay * 1000:g} ms away{' (delay proxy)' if delay else ' (direct)'}")
        yield {"delay": delay}


MODE = Mode(
    "db_delay",
    section,
    charts=(
        ("draw_decision", "-decision.png"),
        ("draw_sweep", "-sweep.png"),
    ),
    title="Postgres farther away",
    options=options,
    fields=(("db_delays", tuple[float, ...], (0.0,)),),  # seconds per round trip, swept
    refused=refused,
    recorded=recorded,
    conditions=conditions,
    sweep=sweep,
)
