"""The delay proxy (bench/sut/delay_proxy.py) in front of the real (embedded)
Postgres: the delay it adds per round trip, pgbench through it, and no write
lost by an app that reaches its database through it.

Margins are wide: the machine is shared and noisy; only floors are tight.
"""

import json
import statistics
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import psycopg2
import pytest

from bench.load import openloop, pgbench
from bench.routes import ROUTES
from bench.sut import delay_proxy
from bench.sut.delay_proxy import Launched, parse_delay, proxied_url
from db import embedded
from tests.delay_proxy_thread import DelayProxy
from tests.helpers import query
from tools import ROOT
from tools.serve import running

pytestmark = pytest.mark.slow  # the instrument measured in real time, against real servers

REVIEW_BODY = '{"film_id": 995, "rating": 4}'


def upstream(database_url):
    parts = urlsplit(database_url)
    return parts.hostname, parts.port


@pytest.mark.parametrize(
    "text, seconds",
    [("0", 0.0), ("5ms", 0.005), ("500us", 0.0005), ("0.02s", 0.02), ("1.5", 0.0015)],
)
def test_delays_are_read_with_their_unit(text, seconds):
    assert parse_delay(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5 min", "-1ms", "fast"])
def test_a_bad_delay_is_refused(text):
    with pytest.raises(ValueError, match="not a delay"):
        parse_delay(text)


def test_the_url_points_at_the_proxy_and_keeps_the_rest():
    url = "postgresql://user:secret@db.example:5432/dvdrental?sslmode=disable"
    assert proxied_url(url, 6000) == (
        "postgresql://user:secret@127.0.0.1:6000/dvdrental?sslmode=disable"
    )
    assert proxied_url("postgresql://db:5432/x", 6000) == "postgresql://127.0.0.1:6000/x"


def round_trips_ms(url, count=30):
    """Times of `SELECT 1` on one autocommit connection (one round trip each), ms."""
    connection = psycopg2.connect(url)
    connection.autocommit = True  # no BEGIN: one round trip per statement
    try:
        times = []
        with connection.cursor() as cursor:
            for _ in range(count):
                started = time.perf_counter()
                cursor.execute("SELECT 1")
                assert cursor.fetchone() == (1,)
                times.append((time.perf_counter() - started) * 1000)
        return times
    finally:
        connection.close()


@pytest.mark.parametrize("delay_ms", [0, 1, 5, 20])
def test_a_round_trip_takes_the_delay_and_not_much_more(database_url, delay_ms):
    direct = statistics.median(round_trips_ms(database_url))
    with DelayProxy(upstream(database_url), delay_ms / 1000) as proxy:
        times = round_trips_ms(proxy.url(database_url))
    assert min(times) >= delay_ms  # a floor, never less
    # Timers wake on whole milliseconds: up to ~1 ms more, plus the copy and noise.
    assert statistics.median(times) < delay_ms + direct + 4


def test_a_large_answer_arrives_whole_and_in_order(database_url):
    """Several megabytes cross the proxy in many chunks, each delayed: none is
    lost or reordered."""
    sql = "SELECT string_agg(lpad(i::text, 7, '0'), '') FROM generate_series(1, 500000) i"
    with DelayProxy(upstream(database_url), 0.002) as proxy:
        connection = psycopg2.connect(proxy.url(database_url))
        try:
            text = query(connection, sql)[0][0]
        finally:
            connection.close()
    assert text == "".join(f"{i:07d}" for i in range(1, 500001))


def test_connections_do_not_wait_for_each_other(database_url):
    """Four 0.3 s queries at once through a 20 ms proxy end in ~0.32 s, not 1.2 s."""
    with DelayProxy(upstream(database_url), 0.020) as proxy:
        url = proxy.url(database_url)
        connections = [psycopg2.connect(url) for _ in range(4)]
        try:

            def sleep(connection):
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_sleep(0.3)")

            threads = [threading.Thread(target=sleep, args=(c,)) for c in connections]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            assert proxy.connections() == {"open": 4, "peak": 4, "total": 4}
        finally:
            for connection in connections:
                connection.close()
    assert 0.3 <= elapsed < 0.9


def test_pgbench_through_the_proxy_is_capped_by_the_delay(database_url):
    clients, delay = 4, 0.020
    with DelayProxy(upstream(database_url), delay) as proxy:
        result = pgbench.run(proxy.url(database_url), ROUTES["film"], clients, 2, 2)
    assert result["failed"] == 0
    assert result["latency_ms"] >= 20
    # One round trip per prepared statement: at most clients / delay per second.
    assert 0 < result["tps"] <= clients / delay * 1.05


def test_the_proxy_runs_as_a_command(database_url):
    host, port = upstream(database_url)
    listen = embedded.free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.sut.delay_proxy",
            f"--listen=127.0.0.1:{listen}",
            f"--upstream={host}:{port}",
            "--delay=5ms",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline().strip() == f"delay_proxy listening on 127.0.0.1:{listen}"
        times = round_trips_ms(proxied_url(database_url, listen), count=10)
        assert min(times) >= 5
    finally:
        process.terminate()
        assert process.wait(10) == 0
    counts = json.loads(process.stdout.read().strip().removeprefix(delay_proxy.MARKER))
    assert counts["peak"] == counts["total"] == 1  # "open" may not yet have seen the close


def test_the_benchmark_runs_it_as_a_process_that_counts_round_trips(database_url, tmp_path):
    with open(tmp_path / "proxy.log", "w") as log, Launched(database_url, 0.005, log) as proxy:
        connection = psycopg2.connect(proxy.url)
        try:
            before = proxy.counts()
            with connection.cursor() as cursor:
                started = time.perf_counter()
                cursor.execute("SELECT 1")  # psycopg2 sends BEGIN first, and waits
                connection.commit()
                elapsed = time.perf_counter() - started
            after = proxy.counts()
        finally:
            connection.close()
    # BEGIN, SELECT, COMMIT: three writes, each waiting for its answer.
    assert after["writes"] - before["writes"] == 3
    assert elapsed >= 3 * 0.005
    assert (after["open"], after["total"]) == (1, 1)
    assert proxy.process.returncode == 0


def test_an_unreachable_upstream_closes_the_client(database_url):
    with DelayProxy(("127.0.0.1", embedded.free_port()), 0.001) as proxy:
        with pytest.raises(psycopg2.OperationalError):
            psycopg2.connect(proxy.url(database_url), connect_timeout=5)


@pytest.mark.parametrize("app", ["flask", "quart"])  # psycopg2 and asyncpg
def test_every_2xx_write_through_the_proxy_is_stored(app, db, database_url, tmp_path):
    with DelayProxy(upstream(database_url), 0.005) as proxy:
        port = embedded.free_port()
        log_path = tmp_path / "app.log"
        with running(app, port, proxy.url(database_url), log_path, web_workers=2) as server:
            url = server.url + "/reviews/"
            result = openloop.run(openloop.command(url, 50, 10, 2, method="POST", body=REVIEW_BODY))
    assert result["ok"] == result["sent"] == 100, {k: result[k] for k in ("errors", "statuses")}
    assert query(db, "SELECT count(*) FROM review") == [(100,)]


def test_addresses_are_host_and_port():
    assert delay_proxy.parse_address("127.0.0.1:5") == ("127.0.0.1", 5)
    with pytest.raises(ValueError):
        delay_proxy.parse_address("5")
