"""An app's memory (bench/stack/memory.py): the PSS of a real process tree,
whose forked children share their parent's pages, as a server's workers do."""

import os
import signal
import subprocess
import sys

import pytest

from bench.stack import memory
from infra import procfs
from infra.procfs import status_field

CHILDREN = 3
# A parent that writes 50 MB (every page resident), then forks children that
# touch nothing: the pages stay shared, copy-on-write, as after gunicorn forks.
FORKING = f"""
import os, sys, time
held = b"x" * (50 << 20)
for _ in range({CHILDREN}):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
print("forked", flush=True)
time.sleep(60)
"""


def rss_mib(pid):
    """The resident set of one process, shared pages counted in full."""
    return status_field(pid, "VmRSS") / 1024


@pytest.fixture
def forked():
    """The pid of a parent holding 50 MB with its children forked."""
    process = subprocess.Popen(
        [sys.executable, "-c", FORKING],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: the children are stopped with it
    )
    try:
        assert process.stdout.readline().strip() == "forked"
        yield process.pid
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_the_pss_of_a_forked_tree_counts_shared_pages_once(forked):
    tree = procfs.tree(forked)
    assert len(tree) == 1 + CHILDREN
    parent = rss_mib(forked)
    assert parent > 50
    # RSS counts the 50 MB in every child too: adding it up would say 4x.
    assert sum(map(rss_mib, tree)) > 3 * parent
    # PSS splits each shared page among the processes that map it.
    assert 0.5 * parent < memory.pss_mib(forked) < 2.5 * parent


def test_a_process_gone_or_never_started_has_no_pss():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert memory.pss_kib(gone.pid) is None
    assert memory.pss_mib(gone.pid) is None
    assert memory.pss_mib(None) is None


def test_a_live_process_has_a_pss_of_its_own():
    assert memory.pss_kib(os.getpid()) > 1024  # this interpreter holds more than a MiB
