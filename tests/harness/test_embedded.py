"""The embedded Postgres shared by processes that run at once (test.sh and
benchmark.sh, or four `./benchmark.sh --serve APP`, on a fresh clone): one
server, initialised once, stopped by the last one out. A data folder of the
test's own, so the shared test database is not touched: not in pytest's
tmp_path (0700), since the server runs as another user when the tests run as
root (tests/reliability/test_faults.py does the same)."""

import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg2
import pytest

from db import embedded
from infra import ROOT
from tests.helpers import query

pytestmark = pytest.mark.slow  # starts Postgres servers of its own

USERS = 3


@pytest.fixture
def data_dir():
    parent = Path(tempfile.mkdtemp(prefix="pgshared-"))
    try:
        yield parent / "pgdata"
    finally:
        embedded.stop(parent / "pgdata")
        shutil.rmtree(parent, ignore_errors=True)


def select_one(url):
    connection = psycopg2.connect(url, connect_timeout=10)
    try:
        return query(connection, "SELECT 1")
    finally:
        connection.close()


def test_concurrent_first_starts_share_one_server_until_the_last_leaves(data_dir):
    inside = threading.Barrier(USERS, timeout=120)
    first_left = threading.Event()

    def use(index):
        with embedded.serving("dvdrental_shared", data_dir=data_dir) as url:
            inside.wait()  # all started together on an empty folder
            if index == 0:
                return url  # leaves first: the one most likely to have started it
            first_left.wait(60)
            return select_one(url)  # still served after another user left

    with ThreadPoolExecutor(USERS) as executor:
        futures = [executor.submit(use, index) for index in range(USERS)]
        first_url = futures[0].result(timeout=180)
        first_left.set()
        answers = [future.result(timeout=180) for future in futures[1:]]
    assert answers == [[(1,)]] * (USERS - 1)
    assert first_url.endswith("/dvdrental_shared")
    assert embedded.running_port(data_dir) is None  # the last one out stopped it


def test_a_server_started_by_hand_is_left_running(data_dir):
    embedded.start("dvdrental_by_hand", data_dir=data_dir)
    with embedded.serving("dvdrental_by_hand", data_dir=data_dir) as url:
        assert select_one(url) == [(1,)]
    assert embedded.running_port(data_dir) is not None


def test_a_start_interrupted_half_way_stops_the_server_it_started(data_dir, monkeypatch):
    """Ctrl-C, SIGTERM or SIGHUP after pg_ctl started the server but before
    serving() yields: no with block owns the server yet, so serving() itself
    stops it (it runs in a session of its own, beyond any signal of ours)."""

    def interrupted(port, database):
        assert embedded.running_port(data_dir) == port  # the server is up
        raise KeyboardInterrupt

    monkeypatch.setattr(embedded, "create_database", interrupted)
    with pytest.raises(KeyboardInterrupt):
        with embedded.serving("dvdrental_interrupted", data_dir=data_dir):
            pytest.fail("yielded")
    assert embedded.running_port(data_dir) is None


# A process that serves from data_dir (argv[1]) and, as serving() stops the
# server on the way out, is sent a Ctrl-C: to its whole process group, pg_ctl
# included, 20 ms into pg_ctl stop. Prints the port the server runs on after.
CTRL_C_AS_IT_STOPS = """
import os, signal, sys, threading
from pathlib import Path
from db import embedded
from tools.command import stop_on_signals

data_dir = Path(sys.argv[1])
run_as_owner = embedded.run_as_owner

def ctrl_c_during(args, **kwargs):
    if args[1] == "stop":
        threading.Timer(0.02, os.killpg, (0, signal.SIGINT)).start()
    return run_as_owner(args, **kwargs)

stop_on_signals()
embedded.run_as_owner = ctrl_c_during
try:
    with embedded.serving("dvdrental_stopping", data_dir=data_dir):
        pass
except KeyboardInterrupt:
    print("interrupted", embedded.running_port(data_dir))
"""


def test_a_ctrl_c_as_it_stops_waits_for_the_server_to_stop(data_dir):
    """Ctrl-C as serving() stops the server it started (a run that ends as it
    is interrupted): the stop goes to its end, then the KeyboardInterrupt
    comes. Cut short, pg_ctl may not have told the server, which runs on in a
    session of its own (one CI run left it so, and the next runs used it)."""
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_AS_IT_STOPS, str(data_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,  # its group of its own: the Ctrl-C reaches no test
    )
    assert done.stdout.split() == ["interrupted", "None"], done.stdout + done.stderr


def test_a_server_gone_as_pg_ctl_stop_comes_is_stopped(data_dir, monkeypatch):
    """The server seen running, then gone before pg_ctl stop reads its pid
    file (a Ctrl-C in pg_ctl start, which passes it on to the server): pg_ctl
    fails, and the stop is no failure. The server still up would be."""
    embedded.start("dvdrental_gone", data_dir=data_dir)
    embedded.stop(data_dir)
    seen = iter([54321])  # running, as the stop looks first; then gone
    monkeypatch.setattr(embedded, "running_port", lambda data_dir: next(seen, None))
    embedded.stop(data_dir)
    monkeypatch.setattr(embedded, "running_port", lambda data_dir: 54321)
    with pytest.raises(subprocess.CalledProcessError):
        embedded.stop(data_dir)
