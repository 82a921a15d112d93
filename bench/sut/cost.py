"""What each part of a run spends in CPU over one measured window, from /proc
(infra/procfs.py), checked against the machine's own count (/proc/stat).

A part is a list of process trees: the app (every copy's server with all its
workers), Postgres (the postmaster with every backend and helper), PgBouncer,
nginx, the delay proxy, the upstream (the ratings' sources), and the load
generator (wrk, the open-loop generator, pgbench). Every process's utime +
stime, and the cutime + cstime of the children it has reaped, is read at the
window's start and at its end; a part's CPU is the sum of the differences
over its trees. The generator runs as a child of this process and is waited
for inside the window, so its CPU is this process's reaped children's.

The check: the parts, with this process's own CPU (the harness watches the
app's connections meanwhile), add up to the machine's busy CPU over the same
window within TOLERANCE. Every other process's CPU is read the same way and
kept beside (`others_s`), so that a check that fails says why: other load
on the machine (another benchmark, a build), whose share is then that much.

    with Window({"app": [pid], "postgres": [postmaster]}) as window:
        ...  # the generator runs
    window.accounting(requests)  # -> the record's "cpu" (below)
"""

import os
import time
from dataclasses import dataclass

from infra import procfs

# Every part a run can have, in the order reports show them.
PARTS = (
    "app", "postgres", "pgbouncer", "nginx", "delay_proxy", "upstream", "generator", "profiler"
)  # fmt: skip
GENERATOR = "generator"
PROFILER = "profiler"  # py-spy, with --profile (bench/sut/sampler.py): no part of the answer
SERVING = tuple(part for part in PARTS if part not in (GENERATOR, PROFILER))  # what answers
HARNESS = "harness"  # this process: it starts the generator and watches the app
OTHERS = "others"  # every process of the machine that is none of the above
TOLERANCE = 0.10  # how far the parts' sum may be from the machine's busy CPU


@dataclass(frozen=True)
class Snapshot:
    """Every process's Stat, the machine's busy CPU seconds, and when."""

    stats: dict  # pid -> procfs.Stat
    busy: float  # a count whose difference between two snapshots is the busy time between
    at: float  # time.monotonic()
    interrupts: float = 0.0  # the machine's interrupt time (procfs.machine_interrupt_seconds)


def snapshot():
    """Now. Reading every process takes a while (tens of ms on a busy
    machine): the machine's idle time is read before and after, and halved,
    as is the time. Busy is wall time x cores less idle time
    (procfs.machine_idle_seconds says why not the busy fields)."""
    first, cores = procfs.machine_idle_seconds()
    start = time.monotonic()
    stats = {each.pid: each for each in procfs.every_stat()}
    end = time.monotonic()
    last, _ = procfs.machine_idle_seconds()
    at = (start + end) / 2
    return Snapshot(stats, at * cores - (first + last) / 2, at, procfs.machine_interrupt_seconds())


def owners(roots, stats):
    """pid -> part for every process of each part's trees (roots: part ->
    its processes' pids, None for one not started); a pid two parts claim is
    the first's."""
    owner = {}
    for part, pids in roots.items():
        for pid in pids:
            if pid is not None:
                for each in procfs.tree(pid, stats.values()):
                    owner.setdefault(each, part)
    return owner


def charges(before, after, roots, me=None):
    """(pid, part, CPU seconds) of every process between the snapshots: each
    part of roots, the generator (me's reaped children: me is this process
    unless given), the harness (me itself) and OTHERS. The trees are read at
    the end: a process started meanwhile counts whole. One that exited
    meanwhile counts in the reaped time of its parent (or of the first
    ancestor still there), less what it had used before the window."""
    me = os.getpid() if me is None else me
    owner = owners(roots, after.stats)
    owner[me] = HARNESS

    def part(pid, reaped=False):
        return GENERATOR if reaped and pid == me else owner.get(pid, OTHERS)

    for pid, now in after.stats.items():
        then = before.stats.get(pid)
        if then is None:
            yield pid, part(pid), now.cpu_seconds
            yield pid, part(pid, reaped=True), now.reaped_cpu_seconds
        else:  # a pid reused meanwhile (less than before) counts for nothing
            yield pid, part(pid), max(now.cpu_seconds - then.cpu_seconds, 0.0)
            reaped = now.reaped_cpu_seconds - then.reaped_cpu_seconds
            yield pid, part(pid, reaped=True), max(reaped, 0.0)
    for pid, then in before.stats.items():
        if pid not in after.stats:  # it exited: its time before the window is not the window's
            reaper = survivor(then.parent, before.stats, after.stats)
            yield reaper, part(reaper, reaped=True), -(then.cpu_seconds + then.reaped_cpu_seconds)


def spent(before, after, roots, me=None):
    """{part: CPU seconds between the snapshots}: charges() added up per part."""
    totals = dict.fromkeys([*roots, GENERATOR, HARNESS, OTHERS], 0.0)
    for _, part, seconds in charges(before, after, roots, me):
        totals[part] += seconds
    return {part: max(value, 0.0) for part, value in totals.items()}


def busiest_others(before, after, roots, me=None, count=3):
    """{command name: CPU seconds} of the `count` busiest names among the
    other processes (what else loaded the machine), most first."""
    names = {}
    for pid, part, seconds in charges(before, after, roots, me):
        if part == OTHERS:
            found = after.stats.get(pid) or before.stats.get(pid)
            name = found.name if found else "?"
            names[name] = names.get(name, 0.0) + seconds
    busiest = sorted(names.items(), key=lambda item: -item[1])[:count]
    return {name: round(seconds, 2) for name, seconds in busiest if seconds > 0}


def survivor(pid, before, after):
    """pid, or its first ancestor (as the start knew them) still there at the
    end: the process whose reaped time an exited child's lands in."""
    while pid not in after and pid in before:
        pid = before[pid].parent
    return pid


def accounting(before, after, roots, requests, me=None):
    """The window's figures, as the records keep them ("cpu"): see figures();
    and others_busiest: the busiest other processes by name, when they took
    enough of the machine to break the check."""
    seconds = spent(before, after, roots, me)
    used = figures(
        after.at - before.at,
        requests,
        seconds,
        after.busy - before.busy,
        after.interrupts - before.interrupts,
    )
    if seconds[OTHERS] > TOLERANCE * used["machine_busy_s"]:
        used["others_busiest"] = busiest_others(before, after, roots, me)
    return used


def figures(window_s, requests, seconds, busy, interrupts=None):
    """- window_s: the window's wall time; requests: those answered in it;
    - cpu_s: CPU seconds per part (those measured, and the generator), the
      harness and the others;
    - machine_busy_s: the machine's busy CPU seconds, every core (wall time x
      cores less /proc/stat's idle time: snapshot());
    - share: (parts + harness) / machine_busy_s; adds_up: within TOLERANCE;
    - interrupts_s: the machine's interrupt time, part of it in no process's
      count (procfs.machine_interrupt_seconds): where the share falls short
      by about that much, that is why."""
    accounted = sum(value for part, value in seconds.items() if part != OTHERS)
    share = accounted / busy if busy > 0 else None
    return {
        "window_s": round(window_s, 4),
        "requests": requests,
        "cpu_s": {part: round(value, 4) for part, value in seconds.items()},
        "machine_busy_s": round(busy, 4),
        "share": None if share is None else round(share, 4),
        "adds_up": share is not None and abs(share - 1) <= TOLERANCE,
        **({} if interrupts is None else {"interrupts_s": round(interrupts, 4)}),
    }


class Window:
    """The snapshots around a measured run (a context manager), of roots:
    part -> the pids of its processes (their trees are read)."""

    def __init__(self, roots):
        self.roots = {part: list(pids) for part, pids in roots.items() if any(pids)}
        self.before = self.after = None

    def __enter__(self):
        self.before = snapshot()
        return self

    def __exit__(self, *exc):
        self.after = snapshot()

    def accounting(self, requests):
        return accounting(self.before, self.after, self.roots, requests)


def combined(accountings):
    """Several windows' accounting as one (the repeats of a peak): their
    seconds and requests added up, the check made on the sums; None for none."""
    found = [each for each in accountings if each]
    if not found:
        return None
    used = figures(
        sum(each["window_s"] for each in found),
        sum(each["requests"] for each in found),
        added(each["cpu_s"] for each in found),
        sum(each["machine_busy_s"] for each in found),
        sum(each.get("interrupts_s", 0.0) for each in found),
    )
    busiest = added(each.get("others_busiest", {}) for each in found)
    if busiest:
        used["others_busiest"] = dict(sorted(busiest.items(), key=lambda item: -item[1])[:3])
    return used


def added(dicts):
    """{key: the sum of its values} over dicts."""
    total = {}
    for each in dicts:
        for key, value in each.items():
            total[key] = round(total.get(key, 0.0) + value, 4)
    return total


def per_request(cpu):
    """{part: CPU µs per request} of an accounting, in PARTS' order, for
    the parts it measured; None when it has no requests."""
    if not cpu or not cpu["requests"]:
        return None
    seconds = cpu["cpu_s"]
    return {
        part: round(seconds[part] / cpu["requests"] * 1e6, 1) for part in PARTS if part in seconds
    }


def serving(parts):
    """The µs per request of the parts that serve it (all but the generator)."""
    return sum(value for part, value in parts.items() if part in SERVING)


def per_core_second(parts):
    """Requests per second of one core spent by the parts that serve them."""
    spent_us = serving(parts)
    return 1e6 / spent_us if spent_us else None
