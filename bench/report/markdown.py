"""The whole report as Markdown (which reads in a terminal too): the run's
header, the sections of the modes that ran, then one section per deployment
and connection count, and the Postgres settings."""

from bench.report.matrix import matrix_tables
from bench.report.open_loop import open_loop_tables
from bench.report.proxy_cost import proxy_cost_table
from bench.report.sweep import sweep_tables
from bench.report.tables import delay_words, latency_table, ratio_table, sections
from bench.routes import ROUTES


def header(results):
    environment, wrk = results.environment, results.wrk
    lines = [
        f"# Benchmark {environment['date']}",
        "",
        f"`{results.command}` at commit `{environment['git_commit']}`"
        + (" (uncommitted changes)" if environment["git_dirty"] else "")
        + f" on {environment['cpu_count']} x {environment['cpu_model']}.",
        f"Python {environment['python']}, {environment['wrk']}.",
        f"wrk: {wrk['threads']} threads, {wrk['duration_s']}s per run after a "
        f"{wrk['warmup_s']}s warm-up, {wrk['repeat']} run(s) per figure (median, min-max).",
    ]
    pin = results.pinning
    lines.append(
        f"CPU pinning (taskset): app {pin['app']}, Postgres {pin['db']}, wrk and pgbench "
        f"{pin['load']}."
        if pin
        else "No CPU pinning: app, Postgres and wrk share every core."
    )
    lines.append("")
    for app in results.apps:
        if app.status != "measured":
            lines += [f"**{app.label} not measured:** {app.reason}", ""]
    return lines


def what_ran(app):
    """One line per app: its server's command line as the kernel knew it."""
    line = f"- {app.app}: `{app.server_command}`"
    if app.workers:
        line += f", {app.workers} worker(s)"
        if app.threads:
            line += f" x {app.threads} threads"
        line += f", pool {app.pool_size}"
    if app.proxy:
        line += f", behind {app.proxy} (proxy/api.inc)"
    versions = ", ".join(f"{name} {v}" for name, v in app.versions.items())
    return f"{line}; {versions}"


def peak_sections(results, kind):
    """Per deployment (or server: kind), connection count and database delay:
    the ratio table, the latency table and what ran."""
    lines = []
    for deployment, connections, delay, peaks, ceilings, apps in sections(results):
        lines += [
            f"## {deployment} {kind}, {connections} connections{delay_words(delay, ', ')}",
            "",
        ]
        notes = {app.note for app in results.apps if app.deployment == deployment}
        lines += [f"_{note}_\n" for note in sorted(notes - {None})]
        clients = {c.clients for c in ceilings} - {connections}
        if clients:
            lines += [
                f"pgbench ran {', '.join(map(str, clients))} clients, all max_connections allows.\n"
            ]
        lines += [ratio_table(peaks, ceilings, apps, results.wrk["routes"]), ""]
        lines += [latency_table(peaks), ""]
        for app in results.apps:
            here = (app.deployment, app.db_delay_ms) == (deployment, delay)
            if here and app.status == "measured":
                lines.append(what_ran(app))
        lines.append("")
    return lines


def markdown(results):
    """The whole report."""
    lines = header(results)
    lines += proxy_cost_table(results)
    lines += sweep_tables(results)
    matrix = matrix_tables(results)
    if matrix:
        lines += ["## The server matrix", "", *matrix]
    lines += open_loop_tables(results)
    lines += peak_sections(results, "server" if matrix else "deployment")
    if results.database:
        settings = ", ".join(f"{key} = {value}" for key, value in results.database.items())
        lines += [f"Postgres: {settings}", ""]
    lines.append(
        "The article (Flask / Quart req/s, one worker each, wrk -c 20 -d 5m): "
        + "; ".join(
            f"{route.label} {route.article[0]} / {route.article[1]}" for route in ROUTES.values()
        )
    )
    return "\n".join(lines) + "\n"
