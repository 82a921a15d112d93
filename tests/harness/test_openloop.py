"""The open-loop generator (bench/load/openloop/) as an instrument: against servers
made here, whose answers we know, and against a real app that we stall.

No test asserts an app's speed; margins are wide (2 shared, noisy cores).

    python -m tests.harness.test_openloop [APP]  # the stall under both generators (docs/results.md)
"""

import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from hdrh.histogram import HdrHistogram

from bench.load import openloop, wrk
from bench.routes import ROUTES
from db import embedded
from tests.helpers import query
from tools import ROOT
from tools.serve import database, running

pytestmark = pytest.mark.slow  # the instrument measured in real time, against real servers

REVIEW_BODY = '{"film_id": 995, "rating": 4}'  # lua/post.lua's


class Handler(http.server.BaseHTTPRequestHandler):
    """Answers after server.delay seconds with server.status(n) for the n-th request."""

    protocol_version = "HTTP/1.1"  # keep-alive, like the apps
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK

    def answer(self):
        server = self.server
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length).decode()
        with server.lock:
            server.count += 1
            number = server.count
            server.bodies.append(body)
        time.sleep(server.delay)
        data = b'{"ok": true}'
        status = server.status(number)
        try:
            self.send_response(status)
            if status == 503 and server.retry_after:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (the timeout test)

    do_GET = do_POST = answer

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def log_message(self, *args):
        pass


@pytest.fixture
def known_server():
    """A server made here; set .delay (seconds) and .status (n -> HTTP status)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.delay, server.status = 0.0, lambda number: 200
    server.retry_after = False  # a 503 carries Retry-After
    server.count, server.bodies, server.lock = 0, [], threading.Lock()
    server.connections = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def measure(url, rate, duration, connections=10, **options):
    return openloop.run(openloop.command(url, rate, connections, duration, **options))


def test_a_known_delay_is_measured_and_the_schedule_held(known_server):
    known_server.delay = 0.020
    result = measure(known_server.url + "/films/995/", rate=100, duration=4, connections=20)
    assert result["sent"] == 400
    assert result["ok"] == 400 and result["success_rate"] == 1.0
    assert result["achieved_rate"] == pytest.approx(100, rel=0.05)
    latency = result["latency_ms"]
    assert 19.5 <= latency["p50"] <= 50  # 20 ms, plus a loaded machine's scheduling
    assert latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    assert result["send_lag_ms"]["p50"] < 10  # the generator kept its schedule
    assert result["pace"]["due"] == 200
    assert result["pace"]["answered"] >= 200 * 0.9  # and the server its pace


def test_a_server_slower_than_the_schedule_falls_behind_its_pace(known_server):
    """One connection, 20 ms an answer: at most 50/s of the 100/s offered."""
    known_server.delay = 0.020
    result = measure(known_server.url + "/", rate=100, duration=2, connections=1)
    assert result["pace"]["due"] == 100
    assert result["pace"]["answered"] <= 100 * 0.7


def test_sub_millisecond_answers_are_resolved(known_server):
    result = measure(known_server.url + "/", rate=200, duration=2, connections=5)
    # An immediate answer takes a fraction of a millisecond here (more on a
    # busy machine); whole-millisecond resolution would read it as 0 or 1.
    assert 0 < result["service_ms"]["p50"] < 5
    assert result["service_ms"]["p50"] != pytest.approx(round(result["service_ms"]["p50"]))


def test_every_post_is_counted_exactly(known_server):
    result = measure(
        known_server.url + "/reviews/", rate=200, duration=2, method="POST", body=REVIEW_BODY
    )
    assert result["ok"] == result["sent"] == 400 == known_server.count
    assert set(known_server.bodies) == {REVIEW_BODY}


@pytest.mark.parametrize("rate, connections", [(2, 1), (0.4, 2)])
def test_connections_idle_past_the_limit_are_reopened(known_server, rate, connections):
    """Reused after 0.5 s idle; after 2.5 s, past IDLE_LIMIT, a new one is
    opened rather than racing the server's keep-alive timeout."""
    result = measure(known_server.url + "/", rate=rate, duration=5, connections=5)
    assert result["ok"] == result["sent"] == round(rate * 5)
    assert known_server.connections == connections


def test_non_2xx_answers_are_failures_counted_by_status(known_server):
    known_server.status = lambda number: 503 if number % 2 else 200
    result = measure(known_server.url + "/", rate=100, duration=2, connections=1)
    assert result["statuses"] == {"200": 100, "503": 100}
    assert (result["ok"], result["non_2xx"], result["success_rate"]) == (100, 100, 0.5)
    assert HdrHistogram.decode(result["ok_histogram"]).get_total_count() == 100  # the 2xx alone
    refused = result["refused"]
    assert (refused["count"], refused["retry_after"]) == (100, 0)
    assert 0 < refused["latency_ms"]["p50"] <= refused["latency_ms"]["p99"]


def test_a_refusal_s_retry_after_is_counted(known_server):
    known_server.status = lambda number: 503 if number % 4 else 200
    known_server.retry_after = True
    result = measure(known_server.url + "/", rate=100, duration=1, connections=2)
    assert result["refused"]["count"] == result["refused"]["retry_after"] == 75


def test_timeouts_are_failures_and_the_run_still_ends(known_server):
    known_server.delay = 3.0
    started = time.monotonic()
    result = measure(known_server.url + "/", rate=10, duration=1, connections=20, timeout=0.3)
    assert time.monotonic() - started < 10
    assert result["errors"]["timeout"] == result["sent"] == 10
    assert result["ok"] == 0 and result["success_rate"] == 0.0


def test_a_schedule_of_phases_is_offered_and_counted_second_by_second(known_server):
    """50/s for 1 s, 200/s for 1 s, 50/s for 1 s; every 4th answer a 503, each
    answer 20 ms late: per second of the schedule, what was due and how it ended."""
    known_server.delay = 0.020
    known_server.status = lambda number: 503 if number % 4 == 0 else 200
    args = openloop.command(
        known_server.url + "/", None, 20, None, phases=[(1, 50), (1, 200), (1, 50)],
        objective_ms=10_000,
    )  # fmt: skip
    result = openloop.run(args)
    assert result["sent"] == 300 and result["phases"] == [[1, 50], [1, 200], [1, 50]]
    assert result["offered_rate"] == 100 and result["duration_s"] == 3
    rows = result["per_second"]
    assert [row["due"] for row in rows] == [50, 200, 50]
    assert sum(row["ok"] for row in rows) == result["ok"] == 225
    assert sum(row["refused"] for row in rows) == result["refused"]["count"] == 75
    assert [row["good"] for row in rows] == [row["ok"] for row in rows]  # all within 10 s
    assert all(row["errors"] == 0 for row in rows)
    assert result["pace"]["due"] == 100 + 50  # the last 1.5 s: half the 200/s, then 50/s


def test_a_second_s_timeouts_are_its_errors(known_server):
    known_server.delay = 3.0
    result = measure(known_server.url + "/", rate=10, duration=1, connections=20, timeout=0.3)
    [row] = result["per_second"]
    assert (row["due"], row["errors"], row["ok"], row["good"]) == (10, 10, 0, None)


def test_a_server_that_is_not_there_is_an_error():
    url = f"http://127.0.0.1:{embedded.free_port()}/"
    with pytest.raises(openloop.OpenLoopError, match="exited"):
        measure(url, rate=10, duration=1)


def test_the_command_line_is_recorded(known_server):
    args = openloop.command(known_server.url + "/", 50, connections=3, duration=1)
    result = openloop.run(args)
    assert result["generator"]["name"] == "bench.load.openloop"
    assert "hdrhistogram" in result["generator"]["version"]
    assert result["generator"]["command"] == ["bench.load.openloop", *args[3:]]
    assert [row["second"] for row in result["per_second"]] == [0]
    spectrum = result["spectrum"]
    assert spectrum[0][0] == 0 and spectrum[-1][0] == 100
    assert [value for _, value in spectrum] == sorted(value for _, value in spectrum)


def test_every_2xx_post_is_a_row_under_every_server(server, db):
    """Keep-alive (uvicorn, Sanic) or a connection per request (gunicorn sync):
    the generator's 2xx count is the number of rows written."""
    args = openloop.command(server.url + "/reviews/", 100, 10, 2, method="POST", body=REVIEW_BODY)
    result = openloop.run(args)
    rows = query(db, "SELECT count(*) FROM review")[0][0]
    assert result["ok"] == rows == result["sent"] == 200, result["errors"]
    assert result["statuses"] == {"201": 200}


def test_auto_rates_are_fractions_of_the_slowest_peak():
    assert openloop.auto_rates([3419.2, 1173.0, 2117.5]) == [293, 586, 880, 1056]
    assert openloop.auto_rates([2], fractions=(0.1, 1)) == [1, 2]
    with pytest.raises(ValueError, match="no peak"):
        openloop.auto_rates([])


@pytest.fixture
def flask_process(database_url, tmp_path):
    """flask under gunicorn (2 sync workers): (process, url); its group can be stopped."""
    port = embedded.free_port()
    with running("flask", port, database_url, tmp_path / "flask.log", web_workers=2) as server:
        try:
            yield server.process, server.url
        finally:
            os.killpg(server.process.pid, signal.SIGCONT)  # a stopped group would not stop


def stalled(process, args, at=2.0, pause=1.0):
    """Run a generator's command; at `at` s, SIGSTOP the app's process group for
    `pause` s. Returns (exit status, stdout)."""

    def stall():
        os.killpg(process.pid, signal.SIGSTOP)
        time.sleep(pause)
        os.killpg(process.pid, signal.SIGCONT)

    timer = threading.Timer(at, stall)
    timer.start()
    try:
        completed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    finally:
        timer.join()
    return completed.returncode, completed.stdout + completed.stderr


def test_a_one_second_stall_shows_in_the_tail(flask_process):
    process, url = flask_process
    args = openloop.command(url + "/films/995/", 100, connections=20, duration=8)
    status, output = stalled(process, args)
    assert status == 0, output
    result = openloop.parse_report(output)
    # The ~100 requests due during the stall wait up to 1 s: about 1 in 8 of
    # the run's requests, so p99 is in the hundreds of milliseconds.
    assert result["latency_ms"]["p99"] > 300
    assert result["latency_ms"]["max"] > 700
    errors = result["errors"]
    assert errors["timeout"] == errors["socket"] == 0, result["errors"]  # delayed, not lost
    assert result["ok"] == result["sent"]
    seconds = [row["p99_ms"] for row in result["per_second"] if row["p99_ms"] is not None]
    assert max(seconds) > 500 and min(seconds) < 250  # the stall is in one or two seconds


def compare(app="flask", rate=200, seconds=8):
    """The same 1 s stall under both generators, printed for docs/results.md."""
    port = embedded.free_port()
    url = f"http://127.0.0.1:{port}/films/995/"
    with (
        database() as database_url,
        running(app, port, database_url, os.devnull, web_workers=2) as server,
    ):
        process = server.process
        runs = {"bench.load.openloop": openloop.command(url, rate, 20, seconds)}
        if shutil.which("wrk"):
            route = ROUTES["film"]
            runs["wrk"] = wrk.command(url.removesuffix(route.path), route, 20, 2, seconds, 10)
        for name, args in runs.items():
            status, output = stalled(process, args)
            parse = openloop.parse_report if name == "bench.load.openloop" else wrk.parse_report
            report = parse(output)
            print(name, " ".join(args))
            print(json.dumps({key: report.get(key) for key in ("latency_ms", "ok", "requests")}))
            if "per_second" in report:
                print("p99 per second, ms:", [row["p99_ms"] for row in report["per_second"]])


if __name__ == "__main__":
    compare(*sys.argv[1:2])
