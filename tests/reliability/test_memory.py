"""An app's memory (bench/sut/memory.py): the PSS of a real process tree,
whose forked children share their parent's pages, as a server's workers do;
and every app's, flat under a load."""

import os
import signal
import subprocess
import sys
import time

import pytest

from bench.load import wrk
from bench.routes import ROUTES
from bench.sut import memory
from bench.sut.database import check_nothing_lost
from infra import procfs
from infra.procfs import status_field
from tests.helpers import query
from tests.system_tools import system_tool

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


# An app's server under a load: its PSS after a warm-up, and after 10,000 more
# requests. What it holds for good (a cache filled, the allocator's arenas)
# stays under the margin; a leak of a few KB a request would not.
REQUESTS = 10_000
GROWTH_MIB = 20
ROTATION = ("film", "review")  # a read and a write in turn, wrk's runs of RUN_S
RUN_S, WARMUP_S, CONNECTIONS = 2, 1, 8
WITHIN_S = 100  # the bound: REQUESTS at 100 req/s at least


def run(server, route, seconds=RUN_S):
    """wrk on one route: (route, its report)."""
    args = wrk.command(server.url, ROUTES[route], CONNECTIONS, 2, seconds, timeout=10)
    return route, wrk.run(args)


def test_memory_stays_flat_over_10_000_requests(server, db, record_property):
    """The PSS of the server's whole process tree (bench/sut/memory.py) grows
    by less than GROWTH_MIB over 10,000 requests after a warm-up; every
    answer is a 2xx, every review answered 201 is a row, and the only rows
    more are those wrk left in flight when each of its runs stopped."""
    system_tool("wrk")
    if server.process is None:
        pytest.skip("a server of TEST_SERVERS: no process of this machine's to read")
    runs = [run(server, route, WARMUP_S) for route in ROTATION]
    before = memory.pss_mib(server.process.pid)
    measured, deadline = 0, time.monotonic() + WITHIN_S
    while measured < REQUESTS and time.monotonic() < deadline:
        runs.append(run(server, ROTATION[len(runs) % len(ROTATION)]))
        measured += runs[-1][1]["requests"]
    after = memory.pss_mib(server.process.pid)
    record_property("pss_mib", (round(before, 1), round(after, 1)))
    record_property("requests", measured)
    assert measured >= REQUESTS
    assert all(report["non_2xx"] == report["socket_errors"] == 0 for _, report in runs), runs
    posted = [report["ok"] for route, report in runs if route == "review"]
    [(rows,)] = query(db, "SELECT count(*) FROM review")
    check_nothing_lost(sum(posted), rows, CONNECTIONS * len(posted))
    assert after - before < GROWTH_MIB, f"{before:.1f} MiB -> {after:.1f} MiB"
