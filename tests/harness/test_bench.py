"""The parts of bench/ that compute: wrk's report, the ratio table, the
nothing-lost check (on the real database), pgbench's ceiling, the options."""

import dataclasses
import http.server
import threading
import time

import psycopg2
import pytest

from bench import arguments, cli, parsers
from bench.load import pgbench, wrk
from bench.modes import db_delay, server_matrix
from bench.records import AppRun, Ceiling, Peak, Results
from bench.report import tables
from bench.routes import ROUTES
from bench.sut import database, verify
from bench.sut.database import LostWrites, check_nothing_lost
from tests.helpers import query
from tests.system_tools import system_tool

# wrk's output with lua/report.lua, as captured from a run against flask.
WRK_OUTPUT = """\
Running 2s test @ http://127.0.0.1:8731/films/995/
  2 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.41ms    1.20ms  20.49ms   92.56%
  3292 requests in 2.00s, 655.97KB read
Requests/sec:   1643.38
BENCH_JSON {"duration_us": 2000000, "requests": 3300, "bytes": 671713, \
"errors": {"connect": 1, "read": 2, "write": 0, "status": 8, "timeout": 3}, \
"statuses": {"200": 3290, "404": 2, "503": 6, "302": 2}, \
"latency_us": {"min": 838, "max": 20489, "mean": 2410.1, "stdev": 1204.8, \
"percentiles": {"50": 2175, "75": 2610, "90": 3230, "99": 6499, "99.9": 18055}}}
"""


def test_report_parsing():
    parsed = wrk.parse_report(WRK_OUTPUT)
    assert parsed["requests"] == 3300
    assert parsed["requests_per_s"] == pytest.approx(1650.0)
    assert parsed["ok"] == 3290
    assert parsed["non_2xx"] == 10  # 404, 503 and the redirects wrk itself lets pass
    assert parsed["socket_errors"] == 6  # connect + read + write + timeout
    assert parsed["latency_ms"] == {
        "mean": pytest.approx(2.4101),
        "p50": 2.175,
        "p75": 2.61,
        "p90": 3.23,
        "p99": 6.499,
        "p99.9": 18.055,
        "max": 20.489,
    }


def test_report_parsing_without_the_json_line_fails():
    with pytest.raises(wrk.WrkError, match="no report"):
        wrk.parse_report("Running 2s test @ http://127.0.0.1/\nRequests/sec: 1.0\n")


def reported(rate, **extra):
    return {
        "requests_per_s": rate,
        "requests": int(rate),
        "socket_errors": 0,
        "non_2xx": 0,
        "latency_ms": {"p99": rate / 100},
        **extra,
    }


def test_what_a_closed_loop_got_of_an_app_that_refused_is_its_2xx_rate():
    """A closed loop past an admission limit: 3 of 4 answers were 503s, so
    the capacity search starts from a quarter of wrk's req/s, not from the
    refusals' rate (bench/modes/capacity/)."""
    summary = wrk.summarize([reported(2000, non_2xx=1500), reported(1000, non_2xx=750)])
    assert summary.requests_per_s == 1500.0
    assert summary.ok_per_s == 375.0
    assert wrk.summarize([reported(0)]).ok_per_s == 0.0


def test_summary_is_the_median_with_min_and_max_and_every_error():
    runs = [reported(300), reported(100, socket_errors=2), reported(200, non_2xx=1)]
    summary = wrk.summarize(runs)
    assert summary.requests_per_s == 200
    assert (summary.requests_per_s_min, summary.requests_per_s_max) == (100, 300)
    assert summary.latency_ms == {"p99": 2.0}  # the median run's
    assert (summary.socket_errors, summary.non_2xx, summary.runs) == (2, 1, 3)


def measurement(app, route, rate):
    return Peak(app, "tuned", 20, route, wrk.summarize([reported(rate)]), [reported(rate)])


def test_ratio_rows_are_to_flask_and_to_the_pgbench_ceiling():
    measurements = [
        measurement("quart", "film", 1160),
        measurement("flask", "film", 330),
        measurement("flask", "films", 99),
    ]
    ceiling = [Ceiling("film", 20, 3300.0, 1.0, 0, 20, "pgbench")]
    rows = tables.ratio_rows(measurements, ceiling, ["flask", "quart"], ["film", "films"])
    film, films = rows
    assert film["requests_per_s"] == {"flask": 330, "quart": 1160}
    assert film["ratio"] == {"quart": pytest.approx(1160 / 330)}
    assert film["share_of_ceiling"] == {
        "flask": pytest.approx(0.1),
        "quart": pytest.approx(1160 / 3300),
    }
    assert films["ratio"] == {"quart": None}  # quart has no figure for it
    assert films["pgbench_tps"] is None


def test_ratio_table_without_flask_is_to_the_first_app():
    measurements = [measurement("sanic", "film", 200), measurement("quart", "film", 100)]
    text = tables.ratio_table(measurements, [], ["quart", "sanic"], ["film"])
    assert "sanic/quart" in text and "| GET /films/995/ | 100 | 200 | 2.00x |" in text


def test_memory_is_shown_at_rest_then_the_largest_at_the_end():
    assert tables.memory_cell(61.6, [80.2, None, 95.7]) == "62 -> 96"
    assert tables.memory_cell(None, [80.2]) == "- -> 80"
    assert tables.memory_cell(None, [None]) == "-"  # a server started elsewhere


def with_memory(peak, deployment, pss_mib, delay=0.0):
    return dataclasses.replace(peak, deployment=deployment, pss_mib=pss_mib, db_delay_ms=delay)


def test_the_latency_table_shows_each_apps_memory_and_cpu_where_measured():
    latency = dict.fromkeys(("mean", "p50", "p90", "p99", "max"), 1.0)
    runs = [reported(330, latency_ms=latency), reported(900, latency_ms=latency)]
    cpu = {"app": 500.4, "postgres": 100.0, "generator": 80.0}  # the generator serves nothing
    peaks = [
        Peak("flask", "tuned", 20, "film", wrk.summarize(runs[:1]), runs[:1], pss_mib=143.2),
        Peak("quart", "tuned", 20, "film", wrk.summarize(runs[1:]), runs[1:]),
    ]
    peaks[0].cpu_us_per_request = cpu
    apps = [
        AppRun("flask", "tuned", "measured", pss_rest_mib=120.4),
        AppRun("quart", "tuned", "measured"),
    ]
    flask, quart = tables.latency_table(peaks, apps).splitlines()[2:]
    assert "| PSS MiB rest -> end | CPU µs/req | app µs/req |" in tables.latency_table(peaks, apps)
    assert flask.endswith("| 0 | 0 | 120 -> 143 | 600 | 500 | - |")
    assert quart.endswith("| 0 | 0 | - | - | - | - |")


def results_of(peaks, apps):
    return Results("", {}, {"routes": ["film"]}, apps, peaks)


def test_the_server_matrix_has_a_memory_table_per_pair():
    peaks = [
        with_memory(measurement("flask", "film", 330), "gunicorn-sync", 150.0),
        with_memory(measurement("flask", "films", 90), "gunicorn-sync", 170.0),
        with_memory(measurement("flask", "film", 300), "gunicorn-gthread", 60.0),
    ]
    apps = [
        AppRun("flask", "gunicorn-sync", "measured", pss_rest_mib=140.0),
        AppRun("flask", "gunicorn-gthread", "measured", pss_rest_mib=55.0),
        AppRun("flask", "wsgiref", "failed", reason="did not start"),
    ]
    text = "\n".join(server_matrix.tables(results_of(peaks, apps)))
    memory = text.split("### Memory: PSS MiB at rest -> the largest at the end of a run")[1]
    assert "| gunicorn-sync | 140 -> 170 |" in memory
    assert "| gunicorn-gthread | 55 -> 60 |" in memory


def test_the_delay_sweep_shows_each_apps_memory_per_delay():
    peaks = [
        with_memory(measurement("flask", "film", 330), "tuned", 150.0),
        with_memory(measurement("flask", "film", 100), "tuned", 152.0, delay=5.0),
    ]
    apps = [
        AppRun("flask", "tuned", "measured", pss_rest_mib=140.0),
        AppRun("flask", "tuned", "measured", pss_rest_mib=141.0, db_delay_ms=5.0),
    ]
    text = "\n".join(db_delay.section(results_of(peaks, apps)))
    assert "| round trips | PSS MiB rest -> end |" in text
    assert "| flask | 0 ms | - | 140 -> 150 |" in text
    assert "| flask | 5 ms | - | 141 -> 152 |" in text


def test_requests_cell_shows_spread_and_errors_beside_the_number():
    summary = wrk.summarize([reported(90), reported(110, socket_errors=3, non_2xx=4)])
    assert tables.requests_cell(summary) == "100 (90-110) [3 socket errors, 4 non-2xx]"


def test_the_ledger_balances_2xx_answers_against_the_rows_added():
    ledger = check_nothing_lost(responses_2xx=3, rows_added=5, connections=20)
    assert ledger.as_dict() == {
        "responses_2xx": 3,
        "rows_added": 5,
        "connections": 20,
        "in_flight": 2,
        "ok": True,
    }


def test_a_2xx_without_its_row_is_a_lost_write():
    with pytest.raises(LostWrites, match="5 responses said 201 but only 4 rows"):
        check_nothing_lost(responses_2xx=5, rows_added=4, connections=20)


def test_more_rows_than_requests_in_flight_fails_too():
    check_nothing_lost(responses_2xx=4, rows_added=8, connections=4)
    with pytest.raises(LostWrites, match="more than the 3 requests"):
        check_nothing_lost(responses_2xx=4, rows_added=8, connections=3)


def test_server_settings_state_durability(db):
    settings = database.server_settings(db)
    assert settings["fsync"] in ("on", "off") and int(settings["max_connections"]) > 0


@pytest.mark.slow  # runs pgbench for a second
def test_pgbench_runs_the_apps_sql_on_the_real_database(database_url, db):
    """The review route's SQL writes to the film it is given, and to no other."""
    [(other,)] = query(db, "SELECT min(film_id) FROM film WHERE film_id <> 995")
    route = ROUTES["review"].writing_to(other)
    result = pgbench.run(database_url, route, clients=2, threads=1, duration=1)
    assert result["tps"] > 0 and result["failed"] == 0 and result["clients"] == 2
    assert "$DATABASE_URL" in result["command"] and database_url not in result["command"]
    assert query(db, "SELECT DISTINCT film_id, rating FROM review") == [(other, 4)]


def test_pgbench_output_parsing():
    text = "number of transactions actually processed: 8600\n"
    text += "number of failed transactions: 2 (0.1%)\nlatency average = 0.930 ms\n"
    text += "tps = 4300.355359 (without initial connection time)\n"
    assert pgbench.parse_output(text) == {
        "tps": 4300.355359,
        "latency_ms": 0.93,
        "failed": 2,
        "transactions": 8600,
    }


class StatusHandler(http.server.BaseHTTPRequestHandler):
    """Answers 200 on /ok and 404 elsewhere, always with a JSON body."""

    def do_GET(self):
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def status_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StatusHandler)
    # Polled often, so that shutdown() returns at once rather than after 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow  # runs wrk for a second
def test_the_lua_report_counts_responses_by_status(status_server):
    system_tool("wrk")
    route = dataclasses.replace(ROUTES["film"], key="missing", path="/missing")
    parsed = wrk.run(wrk.command(status_server, route, 2, 1, 1, 5))
    assert parsed["requests"] > 0 and parsed["ok"] == 0
    assert parsed["non_2xx"] == parsed["requests"] == parsed["statuses"][404]


def test_verification_names_what_is_wrong(status_server):
    problems = verify.verify_route(status_server, ROUTES["film"])
    assert problems == [
        "GET /films/995/: status 404, expected 200",
        "GET /films/995/: body is not film 995",
    ]


@pytest.mark.parametrize(("text", "seconds"), [("8", 8), ("8s", 8), ("5m", 300), ("1h", 3600)])
def test_durations(text, seconds):
    assert parsers.seconds(text) == seconds


def test_options():
    args = arguments.parser().parse_args(
        [
            "all",
            "-c",
            "20,64,256",
            "--deployment",
            "both",
            "--routes",
            "film,review",
            "--pin",
            "0:1:1",
            "--env",
            "POOL_TIMEOUT=2",
            "--env",
            "GUNICORN_CMD_ARGS=--backlog 4096",
            "--worker-threads",
            "20",
            "--db-connections",
            "50",
            "--db-delay",
            "0,500us,5ms",
        ]
    )
    assert args.db_delays == pytest.approx((0.0, 0.0005, 0.005))
    assert args.connections == [20, 64, 256]
    assert args.deployment == ["article", "tuned"]
    assert args.routes == ["film", "review"]
    assert args.pin == {"app": "0", "db": "1", "load": "1"}
    assert dict(args.env) == {"POOL_TIMEOUT": "2", "GUNICORN_CMD_ARGS": "--backlog 4096"}
    assert (args.worker_threads, args.db_connections) == (20, 50)


# Each wrong option, and what its one line on stderr must say: refused for
# its own reason, not another's (say, argparse's "expected one argument" for
# a value that starts with "-").
WRONG_OPTIONS = [
    (["--routes", "films,nope"], "argument --routes: 'films,nope': choose from"),
    (["--env", "WORKERS"], "--env wants NAME=VALUE, not 'WORKERS'"),
    (["--env", "a b=1"], "--env wants NAME=VALUE, not 'a b=1'"),
    (["--db-delay", "5ms,5ms"], "argument --db-delay: a value is named twice"),
    (["--db-delay=-1ms"], "argument --db-delay: not a delay: '-1ms'"),
    (["--db-delay", "far"], "argument --db-delay: not a delay: 'far'"),
    # What the harness sets and records itself: through --env, the report
    # would state a configuration that did not run.
    (["--env", "GUNICORN_CMD_ARGS=--threads=20"], "--env GUNICORN_CMD_ARGS: set processes"),
    (["--env", "GUNICORN_CMD_ARGS=--backlog 64 -w 9"], "--env GUNICORN_CMD_ARGS: set processes"),
    (["--env", "GUNICORN_CMD_ARGS=--worker-class gevent"], "--env GUNICORN_CMD_ARGS: set"),
    (["--env", "WEB_WORKERS=9"], "--env WEB_WORKERS: use --workers"),
    (["--env", "POOL_MAX_SIZE=90"], "--env POOL_MAX_SIZE: use --db-connections"),
    (["--worker-threads", "0"], "argument --worker-threads: not a positive number: '0'"),
    (["--db-connections", "-1"], "argument --db-connections: not a positive number: '-1'"),
    # A run of 0 s, a timeout of 0 s, no threads or no repeat measure nothing.
    (["--duration", "0"], "argument --duration: must be at least 1s: '0'"),
    (["--timeout", "0s"], "argument --timeout: must be at least 1s: '0s'"),
    (["--threads", "0"], "argument -t/--threads: not a positive number: '0'"),
    (["--repeat", "0"], "argument --repeat: not a positive number: '0'"),
    (["--port", "65536"], "argument --port: not a port (0-65535): '65536'"),
    (["--port", "-1"], "argument --port: not a port (0-65535): '-1'"),
]


@pytest.mark.parametrize(
    ("wrong", "says"), WRONG_OPTIONS, ids=[" ".join(wrong) for wrong, _ in WRONG_OPTIONS]
)
def test_a_wrong_option_is_refused_in_one_line_for_its_own_reason(capsys, wrong, says):
    with pytest.raises(SystemExit) as exited:
        arguments.parser().parse_args(["flask", *wrong])
    assert exited.value.code != 0
    [line] = capsys.readouterr().err.strip().splitlines()
    assert says in line, line


def test_the_report_states_the_wrk_threads_that_ran():
    from bench.report.markdown import threads_words

    assert threads_words({"threads": 2, "connections": [20]}) == "2 threads"
    assert "at most one per connection (8 at 8)" in threads_words(
        {"threads": 64, "connections": [8, 100]}
    )


def test_each_app_is_named_in_its_database_url():
    from bench.sut.database import named

    url = "postgresql://u:p@h:5/db?sslmode=disable&application_name=old"
    assert named(url, "bench flask tuned 5ms") == (
        "postgresql://u:p@h:5/db?sslmode=disable&application_name=bench%20flask%20tuned%205ms"
    )
    assert named("postgresql://h/db", "x") == "postgresql://h/db?application_name=x"


def test_connections_held_are_read_from_pg_stat_activity(database_url):
    from bench.sut.database import ConnectionsHeld, named

    url = named(database_url, "bench held test")
    with ConnectionsHeld(database_url, "bench held test", every=0.05) as held:
        connections = [psycopg2.connect(url) for _ in range(3)]
        time.sleep(0.3)
        for connection in connections:
            connection.close()
    assert held.most == 3
    with ConnectionsHeld(None, "no database") as nothing:
        pass
    assert nothing.most is None


def test_a_database_url_is_not_saved_in_the_command():
    shown = cli.shown_command(["flask", "--database-url", "postgresql://u:secret@h/db"])
    assert shown == "./benchmark.sh flask --database-url $DATABASE_URL"


@pytest.mark.parametrize(
    ("record", "connections", "trips", "expected"),
    [
        # Five sync workers, 3 round trips of 20 ms: 5 / 0.06 s, whatever wrk offers.
        ({"workers": 5, "in_flight": 5, "pool_size": 1}, 100, 3.0, (5 / 0.06, 5)),
        # An event loop: its pools (2 x 20) bound it, or wrk's connections.
        ({"workers": 2, "in_flight": 40, "pool_size": 20}, 100, 1.0, (40 / 0.02, 40)),
        ({"workers": 2, "in_flight": 40, "pool_size": 20}, 10, 1.0, (10 / 0.02, 10)),
    ],
)
def test_the_bound_a_database_delay_sets_is_in_flight_over_round_trip_time(
    record, connections, trips, expected
):
    run = {"round_trips_per_request": trips}
    peak = Peak("flask", "tuned", connections, "film", None, [run], db_delay_ms=20)
    app_run = AppRun("flask", "tuned", "measured", **record)
    limit, in_flight = db_delay.bound(peak, app_run)
    assert (limit, in_flight) == (pytest.approx(expected[0]), expected[1])
    assert db_delay.bound(dataclasses.replace(peak, db_delay_ms=0), app_run) is None  # direct


def test_a_measurement_over_its_bound_is_the_model_failing_not_a_percentage():
    assert db_delay.bound_cell((100.0, 5), 90.0) == "100 (5 in flight), 90%"
    cell = db_delay.bound_cell((82.0, 5), 944.0)  # 20 threads ran where 1 was recorded
    assert "%" not in cell and "model is wrong" in cell
