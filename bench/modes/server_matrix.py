"""The server matrix (--server with several servers): every app under every
server of its interface, side by side. With --rate auto every pair is offered
one rate per route, as the write-up this reproduces did (550 req/s for all):
75% of the slowest sane pair's peak, sane meaning without errors and not the
floor (wsgiref), so that the rate is one every real server should keep. Its
section: server x app tables of the peaks, of that rate and of memory; its
chart, one group of bars per server."""

from bench.modes.mode import Mode
from bench.report.select import layout
from bench.report.tables import memory_cell, number, requests_cell, table
from bench.routes import ROUTES
from bench.sut.servers import SERVERS, is_server

FRACTION = 0.75  # of the slowest sane pair's peak: the one rate every pair is offered


def is_matrix(sut):
    """Several servers measured side by side (--server), not deployments."""
    return len(sut.deployments) > 1 and all(map(is_server, sut.deployments))


def sane(peak):
    """A pair whose peak may set the matrix's rate: no errors, not the floor."""
    server = SERVERS.get(peak.deployment)
    errors = peak.summary.socket_errors or peak.summary.non_2xx
    return not errors and not (server and server.floor)


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


def memory_table(results, servers, apps, failed):
    """Server x app: each pair's PSS in MiB at rest -> the largest at the end
    of any of its runs, peaks and rates alike (where threads, green threads
    and forked workers show what they cost)."""
    rest = {(a.app, a.deployment): a.pss_rest_mib for a in results.apps}
    ends = {}
    for record in [*results.measurements, *results.openloop]:
        ends.setdefault((record.app, record.deployment), []).append(record.pss_mib)

    def cell(app, server):
        if (app, server) in ends:
            return memory_cell(rest.get((app, server)), ends[(app, server)])

    return [
        "### Memory: PSS MiB at rest -> the largest at the end of a run",
        "",
        table(["server", *apps], matrix_rows(servers, apps, failed, cell)),
        "",
    ]


def tables(results):
    """Server x app, one table per route and connection count: req/s and p99
    (ms) of each pair; then, with --rate, success and p99 at the one rate every
    pair was offered; then each pair's memory. Only for runs of several
    servers (--server)."""
    found = layout(results)
    if not found:
        return []
    servers, apps, failed = found
    by_key = {
        (p.app, p.deployment, p.route, p.connections): p.summary for p in results.measurements
    }
    fixed = {(r.app, r.deployment, r.route): r for r in results.openloop}

    def closed(route, connections):
        def cell(app, server):
            summary = by_key.get((app, server, route, connections))
            if summary:
                return f"{requests_cell(summary)} / {summary.latency_ms['p99']:,.0f}"

        return cell

    def open_loop(route):
        def cell(app, server):
            row = fixed.get((app, server, route))
            if row:
                report = row.report
                latency = report["latency_ms"] or {}
                tail = " / ".join(number(latency.get(key), "{:,.0f}") for key in ("p99", "max"))
                return f"{report['success_rate']:.1%} / {tail}"

        return cell

    lines = []
    for connections in sorted({p.connections for p in results.measurements}):
        for route in results.wrk["routes"]:
            lines += [
                f"### {ROUTES[route].label}, {connections} connections: req/s / p99 ms",
                "",
                table(
                    ["server", *apps],
                    matrix_rows(servers, apps, failed, closed(route, connections)),
                ),
                "",
            ]
    for route in results.wrk["routes"]:
        rates = {r.rate for r in fixed.values() if r.route == route}
        if rates:
            shown = ", ".join(f"{rate:,g}" for rate in sorted(rates))
            lines += [
                f"### {ROUTES[route].label} at {shown} req/s offered: success / p99 / max ms",
                "",
                table(["server", *apps], matrix_rows(servers, apps, failed, open_loop(route))),
                "",
            ]
    return lines + memory_table(results, servers, apps, failed)


def section(results):
    found = tables(results)
    return ["## The server matrix", "", *found] if found else []


MODE = Mode(
    "server_matrix",
    section,
    charts=(("draw_matrix", "-matrix.png"),),
)
