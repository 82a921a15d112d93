"""Any signal cleans up: ./benchmark.sh, measuring or --serve, stopped by
SIGTERM (kill, docker stop), SIGHUP (its terminal closed) or SIGINT (Ctrl-C)
at a given moment leaves no process behind: not an app worker, nginx,
PgBouncer, a delay proxy, wrk, nor the embedded Postgres it started.

Each run gets a marker: TMPDIR, a folder of the test's own, which every
process the run starts inherits in its environment (PgBouncer's and nginx's
temporary folders are made in it), so that what survives is found in /proc
whatever its process group or parent. The run writes to a terminal (a pty);
SIGHUP comes as a hangup brings it: to the run's whole process group, and the
terminal gone (the test closes its side first, so writes to it fail); SIGINT
as Ctrl-C sends it: to the run's whole process group, the terminal still there."""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from bench.run import EMBEDDED_DATABASE
from db import embedded
from db.embedded import free_port
from db.load import load
from infra import procfs
from tools import ROOT
from tools.command import INTERRUPTED

pytestmark = pytest.mark.slow  # runs ./benchmark.sh: Postgres, the apps, nginx, wrk


@pytest.fixture(scope="module")
def pgdata():
    """A data folder of the module's own with the sample data loaded, the
    server stopped: each run starts it (as its own), and must stop it. Not in
    pytest's tmp_path: the server runs as another user when the tests run as root."""
    parent = Path(tempfile.mkdtemp(prefix="signals-pg-"))
    data_dir = parent / "pgdata"
    try:
        with embedded.serving(EMBEDDED_DATABASE, data_dir=data_dir) as url:
            load(url)
        yield data_dir
    finally:
        try:
            embedded.stop(data_dir)
        finally:
            shutil.rmtree(parent, ignore_errors=True)


def marked(marker):
    """{pid: argv} of every live process whose environment or command line
    holds marker, and of every other process in their groups: nginx and
    Postgres write their titles over their argv and environment, nginx's
    workers keep only the title ("nginx: worker process")."""
    stats = procfs.every_stat()
    argvs = {each.pid: procfs.cmdline(each.pid) or [] for each in stats}
    found = {
        each.pid
        for each in stats
        if marker in " ".join(argvs[each.pid]) or marker.encode() in procfs.environ(each.pid)
    }
    groups = {each.group for each in stats if each.pid in found}
    found |= {each.pid for each in stats if each.group in groups}
    return {pid: argvs[pid] for pid in found}


def runs(marker, program):
    """Whether a marked process runs program: its argv[0], a script's argv[1],
    or the title nginx gives itself ("nginx: master process ...")."""
    return any(
        os.path.basename(word.split(" ")[0].rstrip(":")) == program
        for argv in marked(marker).values()
        for word in argv[:2]
    )


class Terminal:
    """./benchmark.sh argv in a session of its own, writing to a pty that
    this test reads; marker: its TMPDIR."""

    def __init__(self, argv, pgdata, marker):
        self.master, slave = os.openpty()
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env |= {"TMPDIR": marker, "PGEMBED_DIR": str(pgdata)}
        self.process = subprocess.Popen(
            ["./benchmark.sh", *argv],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            start_new_session=True,  # its own process group, as a shell's job
        )
        os.close(slave)
        self.output = b""
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        master = self.master
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer has gone, or the test closed it
                return
            if not chunk:
                return
            self.output += chunk

    def hang_up(self):
        """What closing the terminal does: its side closed, SIGHUP to the group."""
        self.close()
        os.killpg(self.process.pid, signal.SIGHUP)

    def close(self):
        if self.master is not None:
            os.close(self.master)
            self.master = None

    def interrupt(self):
        """Ctrl-C: SIGINT to the group, every process the run started in it too."""
        os.killpg(self.process.pid, signal.SIGINT)

    def terminate(self):
        """kill PID, or docker stop: SIGTERM to the process alone."""
        self.process.send_signal(signal.SIGTERM)


def wait_for(condition, what, terminal, timeout=120):
    deadline = time.monotonic() + timeout
    while not condition():
        if terminal.process.poll() is not None or time.monotonic() > deadline:
            text = terminal.output.decode(errors="replace")[-3000:]
            pytest.fail(f"never {what} (exit {terminal.process.poll()}):\n{text}")
        time.sleep(0.02)


# The moments: each a condition on (marker, pgdata, results), and its run's options.
RUN = ["quart", "--workers", "2", "--routes", "film", "--warmup", "0", "--no-pgbench"]
FAN_OUT = ["quart", "--workers", "2", "--fan-out", "2", "--upstream-delay", "5ms", "--warmup", "0"]
FAN_OUT += ["--no-pgbench"]
EVERYTHING = [*RUN, "--proxy", "on", "--pgbouncer", "--db-delay", "1ms", "--duration", "3s"]
MOMENTS = {
    "database start": (lambda m, pg, r: (pg / "postmaster.pid").exists(), RUN),
    "app start": (lambda m, pg, r: runs(m, "uvicorn"), EVERYTHING),
    "measured run": (lambda m, pg, r: runs(m, "wrk"), EVERYTHING),
    "saving": (lambda m, pg, r: any(r.glob("*/*.json")), [*RUN, "--duration", "1s"]),
    # The rating service (python -m upstream) beside the apps, wrk asking them.
    "fan-out run": (lambda m, pg, r: runs(m, "wrk"), [*FAN_OUT, "--duration", "3s"]),
}


@pytest.mark.parametrize(
    ("moment", "how"),
    [
        ("database start", "hang_up"),
        ("app start", "terminate"),
        ("measured run", "hang_up"),
        ("measured run", "terminate"),
        ("saving", "hang_up"),
        ("fan-out run", "terminate"),
        ("database start", "interrupt"),
        ("app start", "interrupt"),
        ("measured run", "interrupt"),
    ],
)
def test_a_signal_at_any_moment_leaves_nothing_running(moment, how, pgdata):
    condition, argv = MOMENTS[moment]
    marker = tempfile.mkdtemp(prefix="signals-run-")
    os.chmod(marker, 0o755)  # nginx and PgBouncer, as nobody, make folders in it
    results = Path(marker) / "results"
    terminal = Terminal([*argv, "--results", str(results)], pgdata, marker)
    try:
        wait_for(lambda: condition(marker, pgdata, results), f"reached {moment}", terminal)
        getattr(terminal, how)()
        terminal.process.wait(timeout=60)
        left = wait_gone(marker)
        assert not left, f"left running after {how} at {moment}: {left}"
        assert embedded.running_port(pgdata) is None, "the Postgres the run started runs on"
        if moment != "saving":  # a signal after the last file is written ends nothing
            assert terminal.process.returncode == 1
        if how in ("terminate", "interrupt"):
            assert b"interrupted: everything started was stopped" in terminal.output
    finally:
        cleaned(terminal, marker)


def cleaned(terminal, marker):
    """After the test, passed or not: nothing of the run's left to harm the next."""
    if terminal.process.poll() is None:
        os.killpg(terminal.process.pid, signal.SIGKILL)
    terminal.process.wait()
    terminal.close()
    for pid in marked(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(marker, ignore_errors=True)


def wait_gone(marker, timeout=10):
    """The marked processes still there after timeout seconds (a SIGKILLed
    group takes a moment to go)."""
    deadline = time.monotonic() + timeout
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("how", ["hang_up", "terminate"])
def test_serve_stops_everything_it_started_on_a_signal(how, pgdata):
    """./benchmark.sh --serve quart --proxy: Postgres, the app, nginx."""
    marker = tempfile.mkdtemp(prefix="signals-serve-")
    os.chmod(marker, 0o755)
    terminal = Terminal(["--serve", "quart", "--proxy", "--port", "0"], pgdata, marker)
    try:
        wait_for(lambda: b" serves http://" in terminal.output, "served", terminal)
        assert runs(marker, "nginx") and runs(marker, "uvicorn")
        getattr(terminal, how)()
        terminal.process.wait(timeout=60)
        assert not wait_gone(marker)
        assert embedded.running_port(pgdata) is None
    finally:
        cleaned(terminal, marker)


# Ctrl-C as it starts: seconds after ./benchmark.sh was typed, while bash,
# scripts/system.sh (bench/preflight.py), scripts/venv.sh, Python's start and
# its imports (half a second) run, before the run takes the signals over.
EARLY = [0.02, 0.08, 0.15, 0.25, 0.4, 0.7, 1.0]


@pytest.mark.parametrize("after", EARLY)
def test_ctrl_c_as_it_starts_is_one_line_and_leaves_nothing(after, pgdata):
    """Whenever it comes: the run stops (not lost, nor a run to its end), in
    one line, with no traceback, and nothing it started is left. Known race,
    left open: a Ctrl-C near 0.4 s was once lost (the run went to its end, in
    one CI rehearsal of two); a run that went on is tried once more, and the
    second must stop."""
    if not interrupted_early(after, pgdata, tolerate_lost=True):
        interrupted_early(after, pgdata, tolerate_lost=False)


def interrupted_early(after, pgdata, tolerate_lost):
    """Whether the run stopped when interrupted `after` seconds in (with
    tolerate_lost, False for a run that went on to its end, checked as clean)."""
    marker = tempfile.mkdtemp(prefix="signals-early-")
    os.chmod(marker, 0o755)
    results = Path(marker) / "results"
    terminal = Terminal([*RUN, "--duration", "1s", "--results", str(results)], pgdata, marker)
    try:
        time.sleep(after)
        terminal.interrupt()
        terminal.process.wait(timeout=60)
        left = wait_gone(marker)
        time.sleep(0.2)  # the pty's last bytes
        output = terminal.output.decode(errors="replace")
        assert not left, f"left running: {left}\n{output[-2000:]}"
        assert embedded.running_port(pgdata) is None, output[-2000:]
        assert "Traceback" not in output and "KeyboardInterrupt" not in output, output[-3000:]
        if tolerate_lost and terminal.process.returncode == 0:
            return False
        assert terminal.process.returncode != 0, output[-2000:]
        assert output.count(INTERRUPTED) == 1, output[-2000:]
        assert not any(results.glob("*/*.json")), "a run went on to its end"
        return True
    finally:
        cleaned(terminal, marker)


def health(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
            return answer.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("moment", ["its workers start", "it answers"])
def test_serve_sanic_ctrl_c_as_it_starts_is_one_line(moment, pgdata):
    """./benchmark.sh --serve sanic, Ctrl-C as its workers start, or as soon
    as /health answers (one worker ready, others maybe not): Sanic's manager
    stops its workers with SIGINT, and one still loading printed the
    KeyboardInterrupt of its stop. Now one line, and nothing left."""
    marker = tempfile.mkdtemp(prefix="signals-serve-")
    os.chmod(marker, 0o755)
    port = free_port()
    terminal = Terminal(["--serve", "sanic", "--port", str(port)], pgdata, marker)
    try:
        if moment == "it answers":
            wait_for(lambda: health(port), "answered", terminal)
        else:
            wait_for(lambda: b"Starting worker" in terminal.output, "started a worker", terminal)
        terminal.interrupt()
        terminal.process.wait(timeout=60)
        assert not wait_gone(marker)
        assert embedded.running_port(pgdata) is None
        time.sleep(0.2)
        output = terminal.output.decode(errors="replace")
        assert "Traceback" not in output and "KeyboardInterrupt" not in output, output[-3000:]
        assert output.count(INTERRUPTED) == 1, output[-2000:]
    finally:
        cleaned(terminal, marker)
