"""infra/procfs.py, the one reader of /proc, against real processes."""

import os
import subprocess
import sys
import time

from infra import procfs

SPIN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_a_tree_holds_a_process_and_its_children_and_their_cpu():
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {SPIN!r}])",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while len(procfs.tree(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        [_, child] = procfs.tree(parent.pid)
        assert procfs.stat(child).parent == parent.pid
        assert procfs.cmdline(child)[0] == sys.executable
        time.sleep(0.2)
        assert procfs.cpu_seconds(parent.pid) > procfs.stat(parent.pid).cpu_seconds
    finally:
        parent.wait(10)


def test_a_process_that_has_gone_reads_as_none():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert procfs.stat(gone.pid) is None and procfs.cmdline(gone.pid) is None
    assert procfs.pss_kib(gone.pid) is None and procfs.status_field(gone.pid, "Threads") is None
    assert procfs.cpu_seconds(gone.pid) == 0


def test_this_process_reads_as_itself():
    me = os.getpid()
    assert procfs.status_field(me, "Threads") >= 1 and procfs.pss_kib(me) > 0
    before = procfs.stat(me).cpu_seconds
    end = time.process_time() + 0.1
    while time.process_time() < end:
        pass
    assert procfs.stat(me).cpu_seconds >= before + 0.05


def test_the_machine_idles_at_most_its_cores_time():
    idle, cores = procfs.machine_idle_seconds()
    start = time.monotonic()
    time.sleep(0.5)
    idle_after, _ = procfs.machine_idle_seconds()
    assert cores == os.cpu_count()
    # Every core counts: 0.5 s of wall time is at most 0.5 s idle per core
    # (and a clock tick, 10 ms, of rounding each).
    assert 0 <= idle_after - idle <= (time.monotonic() - start + 0.02) * cores


def test_a_process_reads_with_its_command_name_and_its_reaped_childrens_cpu():
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        assert procfs.stat(sleeper.pid).name == "sleep"
    finally:
        sleeper.kill()
        sleeper.wait()
    before = procfs.stat(os.getpid()).reaped_cpu_seconds
    subprocess.run([sys.executable, "-c", SPIN], check=True)  # 0.3 s, then waited for
    assert procfs.stat(os.getpid()).reaped_cpu_seconds >= before + 0.2
