"""py-spy on an app's server processes over one measured run (--profile):
every worker's Python stacks, sampled from outside, and the user and kernel
time the processes spent meanwhile (/proc).

Why py-spy, and how (docs/benchmark.md, "Where the CPU goes"):
- it reads a process's memory from outside (ptrace, as root) and needs
  nothing in the app; one py-spy a process of the server's tree, its
  workers included;
- without pausing it (--nonblocking): paused for each sample, Sanic's
  workers spent 20 % more CPU per request at 100 samples a second and 88 %
  at 200 (docs/benchmark.md). Reading a running process, py-spy drops a
  sample whose stack changed while it read it: its "errors", counted;
- it samples only the thread holding the GIL (--gil): Python's CPU. Its
  idle detection counted gunicorn's threads waiting for work as running (a
  run's samples worth 2.4 times the CPU the processes used), and an event
  loop waiting in epoll holds no GIL: a sample with the GIL is a thread
  running Python;
- the kernel's share is not sampled but read: the processes' system time
  (stime); the user time is shared out by the samples;
- it stops on SIGINT at the end of the generator's run, so that the samples
  cover the run's window, and writes the stacks then (--format raw: one
  line per stack, "frame;frame;... count", as flamegraph.pl reads them).

    with Sampled(pids, rate_hz, folder) as sampled:
        ...  # the generator runs
    sampled.result()  # -> the record's "sampled" (below)
"""

import contextlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.errors import BenchmarkError
from bench.layers import packed, shortened
from infra import procfs

PROGRAM = "py-spy"
RATE_HZ = 100  # samples per second of each process (py-spy 100 by default): see docs/benchmark.md
STOP_TIMEOUT_S = 30  # for py-spy to write its stacks once told to stop
COUNTED = re.compile(r"Samples: (\d+) Errors: (\d+)")


def program():
    """py-spy beside this interpreter (the venv's, where extras installed it)."""
    found = Path(sys.executable).with_name(PROGRAM)
    return str(found) if found.exists() else shutil.which(PROGRAM)


class Sampled:
    """A context manager: py-spy on every process of pids' trees (a server
    and its workers) from enter to exit, and the CPU they spent between.
    parts: {"profiler": [py-spy's pids]}, for the window that counts the
    run's CPU (bench/sut/cost.py)."""

    def __init__(self, pids, rate_hz=RATE_HZ):
        self.pids = [pid for pid in pids if pid is not None]
        self.rate_hz = rate_hz
        self.spies = []  # (py-spy's Popen, its output file)
        self.before = self.after = None
        self.folder = None

    @property
    def parts(self):
        return {"profiler": [spy.pid for _, spy, _ in self.spies]}

    def __enter__(self):
        self.folder = tempfile.TemporaryDirectory(prefix="bench-profile-")
        path = program()
        if path is None:
            raise BenchmarkError("py-spy is not installed: --profile needs it")
        self.before = trees(self.pids)
        # One py-spy a process, not one following the server's children
        # (--subprocesses): that one finds a worker only after a while.
        for pid in sorted(self.before):
            output = Path(self.folder.name) / f"{pid}.txt"
            argv = [path, "record", "--pid", str(pid), "--gil", "--nonblocking"]
            argv += ["--full-filenames", "--nolineno", "--format", "raw"]
            argv += ["--rate", str(self.rate_hz)]
            argv += ["--output", str(output)]
            said = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
            spy = subprocess.Popen(argv, **said)
            self.spies.append((pid, spy, output))
        return self

    def __exit__(self, *exc):
        self.after = trees(self.pids)
        for _, spy, _ in self.spies:
            with contextlib.suppress(ProcessLookupError):
                spy.send_signal(signal.SIGINT)
        self.messages = []
        for _, spy, _ in self.spies:
            try:
                err, _ = spy.communicate(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                spy.kill()
                err, _ = spy.communicate()
            self.messages.append((spy.returncode, err))
        if exc[0] is not None:
            self.folder.cleanup()

    def result(self):
        """{"rate_hz", "samples", "errors", "stacks" (bench/layers.py packed()), "user_s",
        "system_s" (the sampled processes' CPU over the run), "processes"
        {pid: {"samples", "cpu_s"}} (every process sampled: its samples and
        its CPU over the run), "behind": what py-spy said when it could not
        keep its rate, or None, "failed": what it said of a process it could
        not sample}. Raises BenchmarkError
        if py-spy could not sample (not root, a process it cannot read)."""
        stacks, samples, errors, behind, failed = {}, 0, 0, None, []
        try:
            for (code, said), (pid, _, output) in zip(self.messages, self.spies, strict=True):
                counted = COUNTED.search(said or "")
                if code != 0 or counted is None or not output.exists():
                    lines = [line for line in (said or "").splitlines() if line.strip()]
                    failed.append(lines[-1] if lines else f"exit status {code}")
                    continue
                errors += int(counted.group(2))
                behind = behind or lagging(said)
                for stack, count in read_raw(output.read_text()):
                    stack = f"process {pid};{stack}"
                    stacks[stack] = stacks.get(stack, 0) + count
                    samples += count  # those written (py-spy's own count may hold one more)
        finally:
            self.folder.cleanup()
        if failed and not stacks:
            raise BenchmarkError(f"py-spy could not sample the app: {failed[0]}")
        user, system = spent(self.before, self.after)
        return {
            "rate_hz": self.rate_hz,
            "samples": samples,
            "errors": errors,
            "behind": behind,
            "user_s": round(user, 4),
            "system_s": round(system, 4),
            "processes": processes(stacks, self.before, self.after),
            "failed": failed,  # what py-spy said of a process it could not sample
            "stacks": packed(stacks),
        }


def lagging(said):
    """The line in which py-spy said it fell behind its rate, or None."""
    return next((line for line in said.splitlines() if "behind" in line), None)


def trees(pids):
    """{pid: Stat} of every process of pids' trees, now."""
    stats = procfs.every_stat()
    by_pid = {each.pid: each for each in stats}
    seen = {each for pid in pids for each in procfs.tree(pid, stats)}
    return {pid: by_pid[pid] for pid in seen if pid in by_pid}


def spent(before, after):
    """(user, system) CPU seconds the processes there at both ends spent between."""
    user = system = 0.0
    for pid, now in after.items():
        then = before.get(pid)
        if then is None or now.cpu_seconds < then.cpu_seconds:
            continue
        kernel = max(now.system_seconds - then.system_seconds, 0.0)
        system += kernel
        user += max(now.cpu_seconds - then.cpu_seconds - kernel, 0.0)
    return user, system


def read_raw(text):
    """(stack, count) of py-spy's raw output, each frame shortened (bench.layers)."""
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            yield ";".join(shortened(frame) for frame in stack.split(";")), int(count)


def processes(stacks, before, after):
    """{pid: {"samples", "cpu_s"}} of every process there at both ends: its
    samples (from the stacks' first frame, "process PID") and its CPU."""
    found = {
        str(pid): {"samples": 0, "cpu_s": round(now.cpu_seconds - before[pid].cpu_seconds, 4)}
        for pid, now in after.items()
        if pid in before
    }
    for stack, count in stacks.items():
        pid = stack.split(";", 1)[0].split()[1]
        found.setdefault(pid, {"samples": 0, "cpu_s": None})["samples"] += count
    return found
