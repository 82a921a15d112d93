"""CPU per request, by part: what every measured run cost each part of the
system under test in CPU microseconds per answered request (bench/sut/cost.py reads it
from /proc over the run's window, warm-up excluded), the requests one core
serves, what the load generator itself took, and the check that the parts
add up to the machine's busy CPU (/proc/stat) over the same windows. The
pgbench ceiling's rows are the floor: the same SQL, no app, no HTTP.

It measures nothing of its own (every closed-loop and open-loop run, and
every pgbench run, is accounted where it runs): its section only."""

from bench.modes.mode import Mode
from bench.report.tables import number, table
from bench.routes import ROUTES
from bench.sut import cost
from bench.sut.targets import EXTERNAL

FLOOR = "pgbench (floor)"


def rows(results):
    """(app, deployment, delay ms, route, load, µs per part, accounting) of
    every Peak (its runs' accountings added up), Rate and Ceiling accounted."""
    found = [
        (
            peak.app,
            peak.deployment,
            peak.db_delay_ms,
            peak.route,
            f"{peak.connections} connections",
            peak.cpu_us_per_request,
            cost.combined(run.get("cpu") for run in peak.runs),
        )
        for peak in results.measurements
    ]
    found += [
        (
            rate.app,
            rate.deployment,
            rate.db_delay_ms,
            rate.route,
            f"{rate.rate:,g} req/s offered",
            rate.cpu_us_per_request,
            rate.report.get("cpu"),
        )
        for rate in results.openloop
    ]
    found += [
        (
            FLOOR,
            "-",
            ceiling.db_delay_ms,
            ceiling.route,
            f"{ceiling.clients} clients",
            ceiling.cpu_us_per_transaction,
            ceiling.cpu,
        )
        for ceiling in results.pgbench
    ]
    return [row for row in found if row[5] and row[6]]


def check_cell(used, deployment=None):
    """The parts' sum against the machine's busy CPU, and what else ran when
    they do not add up; "-" where the check does not apply (a server the run
    did not start: its processes are not the run's to count)."""
    if used["share"] is None or deployment == EXTERNAL:
        return "-"
    if used["adds_up"]:
        return f"{used['share']:.0%}"
    others = others_share(used)
    return f"{used['share']:.0%}, NOT within {cost.TOLERANCE:.0%} (other processes {others:.0%})"


def others_share(used):
    """The share of the machine's busy CPU that processes outside the run took."""
    return used["cpu_s"].get(cost.OTHERS, 0) / used["machine_busy_s"]


def interrupts_share(failing):
    """The machine's interrupt time over its busy CPU, across windows, in words."""
    found = [
        used["interrupts_s"] / used["machine_busy_s"] for used in failing if "interrupts_s" in used
    ]
    return f"{min(found):.0%}-{max(found):.0%}" if found else "not recorded"


def generator_share(used):
    """The generator's share of all the CPU the parts spent (it included)."""
    seconds = used["cpu_s"]
    parts = sum(value for part, value in seconds.items() if part in cost.PARTS)
    return seconds.get(cost.GENERATOR, 0) / parts if parts else None


def verdict(found, cores):
    """The lines under the table: how many windows add up, and why not the others.
    A server --target names was not started by the run, which knows none of its
    processes: they would count as outside the run, so the check leaves it out
    and says so rather than blame other load."""
    checked = [
        used
        for _, deployment, *_, used in found
        if used["share"] is not None and deployment != EXTERNAL
    ]
    external = sum(1 for _, deployment, *_ in found if deployment == EXTERNAL)
    failing = [used for used in checked if not used["adds_up"]]
    lines = []
    if checked:
        lines.append(
            f"The check (the parts with the harness's own process against the machine's busy "
            f"CPU, /proc/stat, {cores} cores): within {cost.TOLERANCE:.0%} in "
            f"{len(checked) - len(failing)} of {len(checked)} measurements."
        )
    if external:
        lines.append(
            f"The check does not apply to a server this run did not start (--target; "
            f"{external} measurements): the run knows none of its processes, so their CPU "
            "is in no part, and the app column is empty."
        )
    if failing:
        shares = [used["share"] for used in failing]
        others = [others_share(used) for used in failing]
        everything = [share + other for share, other in zip(shares, others, strict=True)]
        busiest = cost.added(used.get("others_busiest", {}) for used in failing)
        names = sorted(busiest, key=lambda name: -busiest[name])[:3]
        named = f", the busiest {', '.join(names)}" if names else ""
        lines.append(
            f"It FAILS for {len(failing)}: the parts are {min(shares):.0%}-{max(shares):.0%} of "
            f"the machine's busy CPU there, processes outside the run "
            f"{min(others):.0%}-{max(others):.0%}{named} (all processes together "
            f"{min(everything):.0%}-{max(everything):.0%}). "
            + (
                "Other load on the machine: each part's CPU is still its own, but it shared "
                "the cores (preempted, its caches shared), which may raise it, and the run's "
                "req/s and latency describe a shared machine, not this stack alone."
                if max(others) > cost.TOLERANCE / 2
                else "Nothing else explains it: CPU this accounting does not see, such as "
                "interrupts handled on an idle core, which no process is charged for (the "
                f"machine's interrupts: {interrupts_share(failing)} of its busy CPU there)."
            )
        )
    cores_used = [
        used["cpu_s"].get(cost.GENERATOR, 0) / used["window_s"]
        for *_, used in found
        if used["window_s"]
    ]
    if cores_used:
        lines.append(
            f"The load generator took up to {max(cores_used):.2f} of the {cores} cores, "
            "CPU the system it measured did not have."
        )
    return [" ".join(lines), ""]


def section(results):
    """One table: per measurement, µs per request of each part present, the
    serving parts' sum, requests per core-second, the generator apart, and
    the /proc/stat check; the floor's rows (pgbench) last."""
    found = rows(results)
    if not found:
        return []
    present = [p for p in cost.SERVING if any(p in per for *_, per, _ in found)]
    header = ["app", "deployment", "DB delay", "route", "load"]
    header += [f"{part} µs" for part in present]
    header += ["serving µs", "req per core-s", "generator µs", "generator share", "parts / machine"]
    lines = [
        "## CPU per request, by part",
        "",
        "CPU microseconds per answered request (per transaction for pgbench), from each "
        "part's processes in /proc (utime + stime over each measured run, warm-up excluded): "
        "app = every process of its server, postgres = the postmaster and all its backends, "
        "and each proxy's own. Serving = their sum; req per core-s = 1,000,000 / serving. "
        "The generator (wrk, the open-loop generator, pgbench) is apart: its share of all "
        "the CPU the parts spent. Parts / machine: the parts and the harness against the "
        "machine's busy CPU over the same windows (/proc/stat).",
        "",
    ]
    body = []
    for app, deployment, delay, route, load, per, used in found:
        serving = cost.serving(per)
        body.append(
            [app, deployment, f"{delay:g} ms", ROUTES[route].label, load]
            + [number(per.get(part), "{:,.0f}") for part in present]
            + [number(serving, "{:,.0f}"), number(cost.per_core_second(per), "{:,.0f}")]
            + [number(per.get(cost.GENERATOR), "{:,.0f}")]
            + [number(generator_share(used), "{:.0%}"), check_cell(used, deployment)]
        )
    lines += [table(header, body), ""]
    return lines + verdict(found, results.environment.get("cpu_count"))


MODE = Mode(
    "cpu",
    section,
)
