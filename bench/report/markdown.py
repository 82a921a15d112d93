"""The whole report as Markdown (which reads in a terminal too): the run's
header, the sections it is given (each mode's, in the order of
bench/modes/MODES: bench/modes/__init__.py report()), and the Postgres
settings."""

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
        f"wrk: {threads_words(wrk)}, {wrk['duration_s']}s per run after a "
        f"{wrk['warmup_s']}s warm-up, {wrk['repeat']} run(s) per figure (median, min-max).",
    ]
    pgbench = sorted({c.duration_s for c in results.pgbench if c.duration_s is not None})
    if pgbench:
        lines.append(f"pgbench: {', '.join(f'{s:g}s' for s in pgbench)} per run, each route's SQL.")
    pin = results.pinning
    lines.append(
        f"CPU pinning (taskset): app {pin['app']}, Postgres {pin['db']}, wrk and pgbench "
        f"{pin['load']}."
        if pin
        else "No CPU pinning: app, Postgres and wrk share every core."
    )
    lines.append("")
    if results.stopped:
        lines += [f"**The run stopped before its end:** {results.stopped}", ""]
    for app in results.apps:
        if app.status != "measured":
            lines += [f"**{app.label} not measured:** {app.reason}", ""]
    return lines


def markdown(results, sections):
    """The whole report: the header, then each of sections(results) -> lines."""
    lines = header(results)
    for section in sections:
        lines += section(results)
    if results.database:
        settings = ", ".join(f"{key} = {value}" for key, value in results.database.items())
        lines += [f"Postgres: {settings}", ""]
    lines.append(
        "The article (Flask / Quart req/s, one worker each, wrk -c 20 -d 5m): "
        + "; ".join(
            f"{route.label} {route.article[0]} / {route.article[1]}"
            for route in ROUTES.values()
            if route.article
        )
    )
    return "\n".join(lines) + "\n"


def threads_words(wrk):
    """wrk's threads as they ran: wrk takes no more threads than connections."""
    threads, fewest = wrk["threads"], min(wrk["connections"])
    if threads > fewest:
        return f"{threads} threads, at most one per connection ({fewest} at {fewest})"
    return f"{threads} threads"
