"""The processes a run starts: free ports, CPU pinning, what they print."""

import contextlib
import json
import os
import shlex
import subprocess

from bench.errors import BenchmarkError
from db import embedded
from infra import ROOT, ports, procfs


class PortTaken(BenchmarkError):
    """The port asked for is in use."""


def cpu_set(cpus):
    """The CPUs a taskset list like 0,2-3 names."""
    result = set()
    for part in cpus.split(","):
        low, _, high = part.partition("-")
        result.update(range(int(low), int(high or low) + 1))
    return result


def taskset(args, cpus):
    """args run on the CPUs listed (None: anywhere)."""
    return ["taskset", "--cpu-list", cpus, *args] if cpus else args


@contextlib.contextmanager
def pinned(cpus):
    """Processes started inside inherit this CPU affinity (None: no change)."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpu_set(cpus))
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


@contextlib.contextmanager
def pinned_database(cpus):
    """Pin the embedded Postgres (running and future backends) while inside;
    restore its affinity on exit. Only the embedded server can be pinned."""
    pid_file = embedded.DATA_DIR / "postmaster.pid"
    if not cpus or not pid_file.exists():
        yield
        return
    postmaster = int(pid_file.read_text().split()[0])
    before = os.sched_getaffinity(postmaster)
    set_affinity(postmaster, cpu_set(cpus))
    try:
        yield
    finally:
        set_affinity(postmaster, before)


def set_affinity(postmaster, cpus):
    for pid in procfs.tree(postmaster):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(pid, cpus)


def free_port(port=0):
    """port if it is free (0: any free one); PortTaken if it is not."""
    try:
        return ports.free_port(port)
    except OSError:
        raise PortTaken(f"port {port} is taken: choose another with --port") from None


def server_command(pid):
    """The server's command line as the kernel knows it."""
    words = procfs.cmdline(pid)
    return None if words is None else shown(words)


def shown(args):
    """A command line relative to the project, as a reader would type it (and
    with no path of this machine in the results)."""
    return shlex.join(str(arg).removeprefix(f"{ROOT}{os.sep}") for arg in args)


def run_logged(args, log=None):
    """Run a load generator from the project folder; its CompletedProcess, its
    command line and output written to log (the run's log file)."""
    completed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if log is not None:
        log.write(f"$ {' '.join(args)}\n{completed.stdout}{completed.stderr}\n")
    return completed


def marked_json(text, marker):
    """The JSON after marker on the last line of text that starts with it
    (how wrk's Lua script, the open-loop generator and the delay proxy
    report), or None when no line does."""
    lines = [line for line in text.splitlines() if line.startswith(marker)]
    return json.loads(lines[-1].removeprefix(marker)) if lines else None
