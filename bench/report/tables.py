"""Tables from the results: the article-style ratio table, the latency table,
the pgbench ceiling; as Markdown, which reads in a terminal too."""

from bench.routes import ROUTES
from bench.stack.deployments import BEHIND_NGINX
from bench.stack.servers import is_server


def baseline_app(apps):
    """Ratios are to Flask, the app the article migrates from; else the first."""
    return "flask" if "flask" in apps else apps[0]


def requests_cell(summary):
    """Median req/s, its min-max when repeated, and any error beside it."""
    cell = f"{summary['requests_per_s']:,.0f}"
    if summary["runs"] > 1:
        cell += f" ({summary['requests_per_s_min']:,.0f}-{summary['requests_per_s_max']:,.0f})"
    flags = []
    if summary["socket_errors"]:
        flags.append(f"{summary['socket_errors']} socket errors")
    if summary["non_2xx"]:
        flags.append(f"{summary['non_2xx']} non-2xx")
    return cell + (f" [{', '.join(flags)}]" if flags else "")


def paired_ratios(runs, base_runs):
    """Each repeat's ratio of req/s: apps run in rotation, so the two runs of
    one repeat were measured minutes apart at most, under the same drift."""
    return [
        run["requests_per_s"] / base["requests_per_s"]
        for run, base in zip(runs, base_runs, strict=False)
        if base["requests_per_s"]
    ]


def ratio_rows(measurements, pgbench, apps, routes):
    """One row per route: req/s per app, each app's ratio to the baseline (of
    the medians) with its spread (the lowest and highest ratio of one repeat),
    the pgbench ceiling and each app's share of it. Missing figures are None."""
    base = baseline_app(apps)
    by_key = {(m["app"], m["route"]): m["summary"] for m in measurements}
    runs = {(m["app"], m["route"]): m.get("runs", []) for m in measurements}
    ceiling = {p["route"]: p["tps"] for p in pgbench}
    rows = []
    for route in routes:
        summaries = {app: by_key.get((app, route)) for app in apps}
        rates = {
            app: summary["requests_per_s"] if summary else None
            for app, summary in summaries.items()
        }
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
                    app: spread(
                        paired_ratios(runs.get((app, route), []), runs.get((base, route), []))
                    )
                    for app in apps
                    if app != base
                },
                "pgbench_tps": ceiling.get(route),
                "share_of_ceiling": {
                    app: rate / ceiling[route] if rate and ceiling.get(route) else None
                    for app, rate in rates.items()
                },
            }
        )
    return rows


def spread(values):
    """(lowest, highest) of two or more values, else None."""
    return (min(values), max(values)) if len(values) > 1 else None


def ratio_cell(ratio, ratio_spread):
    cell = number(ratio, "{:.2f}x")
    if ratio is not None and ratio_spread:
        cell += f" ({ratio_spread[0]:.2f}-{ratio_spread[1]:.2f})"
    return cell


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def number(value, fmt="{:,.0f}"):
    return "-" if value is None else fmt.format(value)


def ratio_table(measurements, pgbench, apps, routes):
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
    for row in ratio_rows(measurements, pgbench, apps, routes):
        summaries = row["summaries"]
        rows.append(
            [ROUTES[row["route"]].label]
            + [requests_cell(summaries[app]) if summaries[app] else "not measured" for app in apps]
            + [ratio_cell(row["ratio"][app], row["ratio_spread"][app]) for app in others]
            + [number(row["pgbench_tps"])]
            + [number(row["share_of_ceiling"][app], "{:.0%}") for app in apps]
        )
    return table(header, rows)


def latency_table(measurements):
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
        "rows added / 2xx (in flight), all runs",
    ]
    rows = []
    for m in measurements:
        summary, latency, ledger = m["summary"], m["summary"]["latency_ms"], m.get("ledger")
        if ledger:
            books = f"{ledger['rows_added']} / {ledger['responses_2xx']} ({ledger['in_flight']})"
        else:
            books = "-" if m["route"] != "review" else "not checked (no database)"
        rows.append(
            [m["app"], ROUTES[m["route"]].label, requests_cell(summary)]
            + [f"{latency[key]:.1f}" for key in ("mean", "p50", "p90", "p99", "max")]
            + [str(summary["socket_errors"]), str(summary["non_2xx"]), books]
        )
    return table(header, rows)


def matrix_layout(results):
    """(servers, apps, failed pairs) of a server-matrix run (--server with
    several servers), else None."""
    servers = list(dict.fromkeys(m["deployment"] for m in results["measurements"]))
    if len(servers) < 2 or not all(map(is_server, servers)) or len(delays(results)) > 1:
        return None
    apps = list(dict.fromkeys(app["app"] for app in results["apps"]))
    failed = {(a["app"], a["deployment"]) for a in results["apps"] if "reason" in a}
    return servers, apps, failed


def matrix_rows(servers, apps, failed, cell):
    """One row per server, one cell per app: cell(app, server), or "failed",
    or "-" where the app does not run under that server."""
    rows = []
    for server in servers:
        cells = []
        for app in apps:
            value = cell(app, server)
            cells.append(value or ("failed" if (app, server) in failed else "-"))
        rows.append([server, *cells])
    return rows


def matrix_tables(results):
    """Server x app, one table per route and connection count: req/s and p99
    (ms) of each pair; then, with --rate, success and p99 at the one rate every
    pair was offered. Only for runs of several servers (--server)."""
    layout = matrix_layout(results)
    if not layout:
        return []
    servers, apps, failed = layout
    by_key = {
        (m["app"], m["deployment"], m["route"], m["connections"]): m["summary"]
        for m in results["measurements"]
    }
    fixed = {(r["app"], r["deployment"], r["route"]): r for r in results.get("openloop") or []}

    def closed(route, connections):
        def cell(app, server):
            summary = by_key.get((app, server, route, connections))
            if summary:
                return f"{requests_cell(summary)} / {summary['latency_ms']['p99']:,.0f}"

        return cell

    def open_loop(route):
        def cell(app, server):
            row = fixed.get((app, server, route))
            if row:
                report = row["report"]
                latency = report["latency_ms"] or {}
                tail = " / ".join(number(latency.get(key), "{:,.0f}") for key in ("p99", "max"))
                return f"{report['success_rate']:.1%} / {tail}"

        return cell

    lines = []
    for connections in sorted({m["connections"] for m in results["measurements"]}):
        for route in results["wrk"]["routes"]:
            lines += [
                f"### {ROUTES[route].label}, {connections} connections: req/s / p99 ms",
                "",
                table(
                    ["server", *apps],
                    matrix_rows(servers, apps, failed, closed(route, connections)),
                ),
                "",
            ]
    for route in results["wrk"]["routes"]:
        rates = {r["rate"] for r in fixed.values() if r["route"] == route}
        if rates:
            shown = ", ".join(f"{rate:,g}" for rate in sorted(rates))
            lines += [
                f"### {ROUTES[route].label} at {shown} req/s offered: success / p99 / max ms",
                "",
                table(["server", *apps], matrix_rows(servers, apps, failed, open_loop(route))),
                "",
            ]
    return lines


def proxy_cost_table(results):
    """Each app direct and behind nginx (--proxy both), side by side."""
    by_key = {
        (m["app"], m["deployment"], m["route"], m["connections"], delay_of(m)): m
        for m in results["measurements"]
    }
    rows = []
    for (app, deployment, route, connections, delay), direct in by_key.items():
        proxied = by_key.get((app, deployment + BEHIND_NGINX, route, connections, delay))
        if proxied:
            a, b = direct["summary"], proxied["summary"]
            rows.append(
                [
                    f"{app} ({deployment})" + delay_words(delay, ", "),
                    ROUTES[route].label,
                    str(connections),
                    requests_cell(a),
                    requests_cell(b),
                    number(b["requests_per_s"] / a["requests_per_s"], "{:.2f}x"),
                    f"{a['latency_ms']['p99']:.1f} / {b['latency_ms']['p99']:.1f}",
                ]
            )
    if not rows:
        return []
    header = [
        "app",
        "route",
        "connections",
        "direct req/s",
        "behind nginx req/s",
        "nginx/direct",
        "p99 ms direct / nginx",
    ]
    return ["## What nginx in front costs", "", table(header, rows), ""]


def markdown(results):
    """The whole report: one section per deployment and connection count."""
    wrk = results["wrk"]
    lines = [
        f"# Benchmark {results['environment']['date']}",
        "",
        f"`{results['command']}` at commit `{results['environment']['git_commit']}`"
        + (" (uncommitted changes)" if results["environment"]["git_dirty"] else "")
        + f" on {results['environment']['cpu_count']} x {results['environment']['cpu_model']}.",
        f"Python {results['environment']['python']}, {results['environment']['wrk']}.",
        f"wrk: {wrk['threads']} threads, {wrk['duration_s']}s per run after a "
        f"{wrk['warmup_s']}s warm-up, {wrk['repeat']} run(s) per figure (median, min-max).",
    ]
    pin = results.get("pinning")
    lines.append(
        f"CPU pinning (taskset): app {pin['app']}, Postgres {pin['db']}, wrk and pgbench "
        f"{pin['load']}."
        if pin
        else "No CPU pinning: app, Postgres and wrk share every core."
    )
    lines.append("")
    for app in results["apps"]:
        if app["status"] != "measured":
            lines.append(f"**{app['app']} ({app['deployment']}) not measured:** {app['reason']}")
            lines.append("")
    lines += proxy_cost_table(results)
    lines += sweep_tables(results)
    matrix = matrix_tables(results)
    if matrix:
        lines += ["## The server matrix", "", *matrix]
    lines += fixed_rate_tables(results)
    for section in sections(results):
        deployment, connections, delay, measurements, pgbench, apps = section
        kind = "server" if matrix else "deployment"
        lines += [
            f"## {deployment} {kind}, {connections} connections{delay_words(delay, ', ')}",
            "",
        ]
        notes = {app.get("note") for app in results["apps"] if app["deployment"] == deployment}
        lines += [f"_{note}_\n" for note in sorted(notes - {None})]
        clients = {p["clients"] for p in pgbench} - {connections}
        if clients:
            lines += [
                f"pgbench ran {', '.join(map(str, clients))} clients, all max_connections allows.\n"
            ]
        lines += [ratio_table(measurements, pgbench, apps, wrk["routes"]), ""]
        lines += [latency_table(measurements), ""]
        for app in results["apps"]:
            here = app["deployment"] == deployment and delay_of(app) == delay
            if here and app["status"] == "measured":
                line = f"- {app['app']}: `{app['server_command']}`"
                if app["workers"]:
                    line += f", {app['workers']} worker(s)"
                    if app.get("threads"):
                        line += f" x {app['threads']} threads"
                    line += f", pool {app['pool_size']}"
                if app.get("proxy"):
                    line += f", behind {app['proxy']} (proxy/api.inc)"
                versions = ", ".join(f"{name} {v}" for name, v in app["versions"].items())
                lines.append(f"{line}; {versions}")
        lines.append("")
    database = results.get("database") or {}
    if database:
        lines.append(
            "Postgres: " + ", ".join(f"{key} = {value}" for key, value in database.items())
        )
        lines.append("")
    lines.append(
        "The article (Flask / Quart req/s, one worker each, wrk -c 20 -d 5m): "
        + "; ".join(
            f"{route.label} {route.article[0]} / {route.article[1]}" for route in ROUTES.values()
        )
    )
    return "\n".join(lines) + "\n"


def delay_of(row):
    """A row's database delay in ms (results from before --db-delay: 0)."""
    return row.get("db_delay_ms", 0)


def delays(results):
    return list(dict.fromkeys(map(delay_of, results["measurements"])))


def delay_words(delay, before=""):
    """How far Postgres was, for a heading: nothing when direct."""
    return f"{before}database +{delay:g} ms per round trip" if delay else ""


def sections(results):
    """(deployment, connections, delay, measurements, pgbench, apps measured)
    in run order."""
    keys = list(
        dict.fromkeys(
            (m["deployment"], m["connections"], delay_of(m)) for m in results["measurements"]
        )
    )
    for deployment, connections, delay in keys:
        measurements = [
            m
            for m in results["measurements"]
            if (m["deployment"], m["connections"], delay_of(m)) == (deployment, connections, delay)
        ]
        apps = list(dict.fromkeys(m["app"] for m in measurements))
        base = baseline_app(apps)
        apps.sort(key=lambda app: app != base)  # the baseline first
        pgbench = [
            p for p in results["pgbench"] if (p["connections"], delay_of(p)) == (connections, delay)
        ]
        yield deployment, connections, delay, measurements, pgbench, apps


def held(measurement):
    """The most connections the app held in any of its runs (pg_stat_activity)."""
    values = [r["connections_held"] for r in measurement["runs"] if r.get("connections_held")]
    return max(values, default=None)


def round_trips(measurement):
    """Round trips per answered request, through the delay proxy (median run)."""
    values = sorted(
        r["round_trips_per_request"]
        for r in measurement["runs"]
        if r.get("round_trips_per_request")
    )
    return values[len(values) // 2] if values else None


def bound(measurement, record):
    """(req/s, requests in flight): what the app cannot exceed with its
    database delay_ms away (Little's law): the requests it can have waiting on
    Postgres at once, the least of wrk's connections, its processes x threads
    where a request holds its thread, and its pools, over the time each
    request spends in round trips. None when direct or not measured."""
    delay, trips = delay_of(measurement), round_trips(measurement)
    if not delay or not trips or not record.get("workers"):
        return None
    limits = [measurement["connections"], record["workers"] * record["pool_size"]]
    if record.get("in_flight"):
        limits.append(record["in_flight"])
    in_flight = min(limits)
    return in_flight / (trips * delay / 1000), in_flight


def bound_cell(limit, requests_per_s):
    if not limit:
        return "-"
    return f"{limit[0]:,.0f} ({limit[1]} in flight), {requests_per_s / limit[0]:.0%}"


def sweep_tables(results):
    """When async pays: per deployment and route, each app at every database
    delay (rows) and connection count (columns): req/s, p99, the connections
    it held and, with a delay, the bound its concurrency sets. For runs that
    sweep the delay (--db-delay) or the connections (-c)."""
    measurements = results["measurements"]
    counts = sorted({m["connections"] for m in measurements})
    if len(delays(results)) < 2 and len(counts) < 2:
        return []
    records = {(a["app"], a["deployment"], delay_of(a)): a for a in results["apps"]}
    by_key = {
        (m["app"], m["deployment"], delay_of(m), m["route"], m["connections"]): m
        for m in measurements
    }
    header = ["app", "DB delay", "round trips"]
    for count in counts:
        header += [f"c={count} req/s", "p99 ms", "held", "bound (in flight), reached"]
    lines = [
        "## When async pays: database delay x connections",
        "",
        "Each app at every database delay (rows) and wrk connection count: req/s, p99, "
        "the most connections it held (pg_stat_activity), and the bound its concurrency "
        "sets: requests in flight / (round trips per request x delay), in flight being "
        "the least of wrk's connections, the app's processes x threads where a request "
        "holds its thread (sync workers), and its pools. Round trips: the writes it sent "
        "Postgres through the delay proxy per answer.",
        "",
    ]
    shares = [
        (r["proxy_cpu_share"], m["app"], delay_of(m))
        for m in measurements
        for r in m["runs"]
        if r.get("proxy_cpu_share") is not None
    ]
    if shares:
        share, app, delay = max(shares)
        lines += [
            f"The delay proxy took at most {share:.0%} of one core ({app}, +{delay:g} ms): "
            "CPU the app and Postgres did not have.",
            "",
        ]
    for deployment in dict.fromkeys(m["deployment"] for m in measurements):
        for route in results["wrk"]["routes"]:
            rows = []
            for app in dict.fromkeys(a["app"] for a in results["apps"]):
                for delay in delays(results):
                    cells, trips = [], None
                    for count in counts:
                        m = by_key.get((app, deployment, delay, route, count))
                        if not m:
                            cells += ["-", "-", "-", "-"]
                            continue
                        trips = trips or round_trips(m)
                        limit = bound(m, records.get((app, deployment, delay), {}))
                        cells += [
                            requests_cell(m["summary"]),
                            f"{m['summary']['latency_ms']['p99']:,.1f}",
                            number(held(m)),
                            bound_cell(limit, m["summary"]["requests_per_s"]),
                        ]
                    if any(cell != "-" for cell in cells):
                        rows.append([app, f"{delay:g} ms", number(trips, "{:.1f}"), *cells])
            if rows:
                lines += [f"### {deployment}: {ROUTES[route].label}", "", table(header, rows), ""]
    return lines


def fixed_rate_tables(results):
    """Latency at a fixed load: per deployment and route, every app at every rate."""
    rows_in = results.get("openloop") or []
    lines = []
    for deployment, delay in dict.fromkeys((row["deployment"], delay_of(row)) for row in rows_in):
        lines += [
            f"## Latency at a fixed load, {deployment} deployment{delay_words(delay, ', ')}",
            "",
        ]
        generator = results.get("generator") or {}
        lines += [
            f"Open loop ({generator.get('version', 'bench.openloop')}): requests leave on a "
            "schedule, latency from each one's due time; success = 2xx / sent.",
            "",
        ]
        header = [
            "route",
            "offered req/s",
            "app",
            "achieved",
            "success",
            "mean",
            "p50",
            "p90",
            "p95",
            "p99",
            "p99.9",
            "max",
            "rows added / 2xx",
        ]
        order = {app["app"]: index for index, app in enumerate(results["apps"])}
        rows_in_order = sorted(
            (row for row in rows_in if (row["deployment"], delay_of(row)) == (deployment, delay)),
            key=lambda row: (list(ROUTES).index(row["route"]), row["rate"], order[row["app"]]),
        )
        table_rows = []
        for row in rows_in_order:
            report = row["report"]
            latency = report["latency_ms"] or {}
            ledger = report.get("ledger")
            table_rows.append(
                [
                    ROUTES[row["route"]].label,
                    f"{row['rate']:,g}",
                    row["app"],
                    f"{report['achieved_rate']:,.0f}",
                    f"{report['success_rate']:.1%}",
                    *[
                        number(latency.get(key), "{:,.1f}")
                        for key in ("mean", "p50", "p90", "p95", "p99", "p99.9", "max")
                    ],
                    f"{ledger['rows_added']} / {ledger['responses_2xx']}" if ledger else "-",
                ]
            )
        lines += [table(header, table_rows), ""]
    return lines
