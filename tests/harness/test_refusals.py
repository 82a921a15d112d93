"""Every bad value of ./benchmark.sh's options (and of its --serve mode) is
refused before anything starts: one line on stderr, exit 2, no traceback.
In process through bench/cli.checked() and tools/serve.arguments(), which
start nothing; a few through ./benchmark.sh itself. No server is started."""

import os
import string
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import cli, refusals
from bench.routes import ROUTES
from bench.sut.servers import PRODUCTION, SERVERS
from tools import ROOT, serve
from tools.serve import APPS

FUZZ = settings(
    max_examples=20,
    deadline=None,  # a shared machine: time is not the property
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
LIMIT = refusals.open_files_limit() or 1_000_000
OUTSIDE_CPU = max(os.sched_getaffinity(0)) + 1


def refused(capsys, argv, check=cli.checked):
    """The one line check(argv) refused argv with, exit 2; fails otherwise."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        check(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2, (argv, err)
    assert len(err.splitlines()) == 1 and err.endswith("\n"), (argv, err)
    assert "Traceback" not in err
    return err


def either(capsys, argv, check=cli.checked):
    """check(argv) returns (the values may be good), prints the help, or
    refuses in one line."""
    try:
        check(argv)
    except SystemExit as exited:
        if exited.code == 0:  # -h, --he...: the help asked for
            assert capsys.readouterr().out.startswith("usage:")
        else:
            refused(capsys, argv, check)


# Values that are wrong for every option that takes a number or a list of them.
NOT_A_NUMBER = st.one_of(
    st.sampled_from(["", " ", ",", "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "\n", "5\n6"]),
    st.text(st.characters(categories=["L", "P", "S", "Z", "C"]), min_size=1, max_size=20).filter(
        lambda text: text.strip().lower() not in ("", "auto") and not text.startswith("-")
    ),
)
NOT_POSITIVE = st.integers(max_value=0).map(str)
FRACTION = st.floats(min_value=0.01, max_value=1e6).filter(lambda x: x != int(x)).map(repr)
HUGE = st.integers(min_value=10**13, max_value=10**40).map(str)
DURATION_TOO_LONG = st.integers(min_value=25, max_value=10**9).map(lambda hours: f"{hours}h")
UNKNOWN_NAME = st.text(string.ascii_letters + "-_", min_size=1, max_size=12).filter(
    lambda name: not name.startswith("-")
)
CHOICES = {*ROUTES, *SERVERS, PRODUCTION, "article", "tuned", "both", "all", "on", "off"}


def not_choices(values):
    """values, but for a comma list of names every one of which is a choice."""
    return values.filter(
        lambda text: (
            not all(part.strip() in CHOICES for part in text.split(",") if part.strip())
            or not text.strip(", ")
        )
    )


NOT_A_CHOICE = not_choices(st.one_of(NOT_A_NUMBER, UNKNOWN_NAME))
BAD = {
    "--duration": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE, DURATION_TOO_LONG),
    "--warmup": st.one_of(NOT_A_NUMBER, FRACTION, HUGE, DURATION_TOO_LONG),
    "--timeout": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE, DURATION_TOO_LONG),
    "-c": st.one_of(
        NOT_A_NUMBER,
        NOT_POSITIVE,
        FRACTION,
        st.integers(min_value=LIMIT, max_value=10**30).map(str),
        st.integers(1, 500).map(lambda n: f"{n},{n}"),  # named twice
    ),
    "-t": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION),
    "--repeat": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE),
    "--workers": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE),
    "--worker-threads": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE),
    "--db-connections": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE),
    "--port": st.one_of(
        NOT_A_NUMBER, FRACTION, st.integers(max_value=-1).map(str), st.integers(65536).map(str)
    ),
    "--rate": st.one_of(
        NOT_A_NUMBER,
        st.floats(max_value=0.999).map(repr),
        st.floats(min_value=50_000.01).map(repr),  # inf too
        st.integers(1, 500).map(lambda n: f"{n},{n}"),
    ),
    "--db-delay": st.one_of(
        NOT_A_NUMBER,
        st.floats(max_value=-0.001, allow_infinity=False).map(lambda x: f"{x}ms"),
        st.integers(10, 10**30).map(lambda s: f"{s}s"),  # at least the 10 s timeout
        st.just("0.0000001ms"),  # below the proxy's resolution
        st.just("5ms,5ms"),
    ),
    "--fan-out": st.one_of(
        NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE, st.integers(33, 10**6).map(str), st.just("3,3")
    ),
    "--upstream-delay": st.one_of(
        NOT_A_NUMBER,
        st.floats(max_value=-0.001, allow_infinity=False).map(lambda x: f"{x}ms"),
        st.integers(1, 10**30).map(lambda s: f"{s}s"),  # at least the apps' 1 s deadline
        st.sampled_from(["50ms~60ms", "50ms~", "~10ms", "50ms,50ms", "990ms~10ms"]),
    ),
    "--routes": st.one_of(NOT_A_CHOICE, st.just("film,film")),
    "--deployment": st.one_of(NOT_A_CHOICE, st.just("tuned,tuned")),
    "--server": st.one_of(NOT_A_CHOICE, st.just("uvicorn,uvicorn")),
    "--proxy": NOT_A_CHOICE,
    "--replicas": st.one_of(
        NOT_A_NUMBER, NOT_POSITIVE, FRACTION, st.integers(21, 10**30).map(str), st.just("2,2")
    ),
    "--env": st.one_of(
        NOT_A_NUMBER.filter(lambda text: "=" not in text),
        st.sampled_from(["lower=1", "A B=1", "=1", "PORT=1", "DATABASE_URL=x", "WEB_WORKERS=2"]),
        st.text(min_size=1).map(lambda value: f"X=1\0{value}"),
    ),
    "--database-url": st.one_of(
        NOT_A_NUMBER,
        st.sampled_from(
            ["http://h/db", "postgresql://h:99999/db", "postgresql://[::1/db", "host=h dbname=d"]
        ),
    ),
    "--target": st.one_of(
        NOT_A_NUMBER,
        st.sampled_from(
            ["nope", "ftp://h", "http://", "http://h:99999", "http://h/?q=1", "http://h/\nx"]
        ),
        st.text(string.printable, max_size=30).map(lambda text: "h" + text.replace(":", "")),
    ),
    "--write-token-file": st.sampled_from(
        ["", "/nonexistent/write_token", "/dev/null", "/etc", "/proc/self/status"]
    ),
    "--pin": st.one_of(
        NOT_A_NUMBER,
        st.just(f"{OUTSIDE_CPU}:0:0"),
        st.just(f"0-{10**15}:0:0"),
        st.just("1-0:0:0"),
        st.just("0:0"),
        st.just("0::0"),
        st.integers(OUTSIDE_CPU, 10**30).map(lambda cpu: f"0:0:{cpu}"),
    ),
    "--slo": st.one_of(
        NOT_A_NUMBER,
        st.sampled_from(
            ["100", "p99", "p100:1ms", "p0:1ms", "p99:", "0ms", "0.5ms", "2h", "p42:5ms"]
        ),
        st.integers(3_600_001, 10**30).map(lambda ms: f"{ms}ms"),
        st.floats(max_value=0.99, min_value=0).map(lambda ms: f"{ms}ms"),
    ),
    "--slo-step": st.one_of(NOT_A_NUMBER, NOT_POSITIVE, FRACTION, HUGE, DURATION_TOO_LONG),
    "--overload": st.one_of(
        NOT_A_NUMBER,
        st.sampled_from(["0", "-1", "0.5,-2", "101", "1,1", "2,,3"]),
        st.floats(min_value=100.001, max_value=1e300).map(repr),
    ),
    "--spike": st.one_of(
        NOT_A_NUMBER,
        st.sampled_from(
            [
                "3x:2s",
                "1x:1s,1x:1s,0.5x:1s",
                "0.5x:1s,3x:2s",
                "0x:1s,2x:1s,1x:1s",
                "1x:0s,2x:1s,1x:1s",
                "0.5x:4s,101x:2s,0.5x:6s",
                "0.5x:4s,3x:2s,0.5x:25h",
            ]
        ),
    ),
    "--results": st.one_of(
        st.sampled_from(["", "/dev/null", "/proc/x", "/dev/null/x", "x\0y"]),
        st.integers(256, 2000).map(lambda length: "x" * length),  # a name too long
    ),
}


@pytest.mark.parametrize("option", BAD)
def test_every_bad_value_of_every_option_is_one_line_and_exit_2(option, capsys):
    @FUZZ
    @given(value=BAD[option])
    def check(value):
        err = refused(capsys, ["flask", option, value])
        # The option is named (argparse's "argument -c/--connections:", or ours).
        assert option in err or "argument" in err, err

    check()


@pytest.mark.parametrize(
    "argv",
    [
        ["flask", "--duration", "24h"],
        ["flask", "--warmup", "0"],
        ["flask", "-c", "20,64,256", "-t", "4"],
        ["flask", "--rate", "1,50000"],
        ["flask", "--rate", "auto"],
        ["flask", "flask", "--slo", "100ms"],
        ["flask", "quart", "--slo", "p95:50ms", "--slo-step", "2s"],
        ["flask", "quart", "--slo", "100ms", "--overload", "0.5,1,1.5,2,4"],
        ["flask", "quart", "--slo", "100ms", "--spike"],
        ["flask", "sanic", "--rate", "300", "--profile"],
        ["flask", "--spike", "0.5x:4s,3x:2s,0.5x:6s", "--slo", "100ms"],
        ["flask", "--slo", "1s", "--tune"],
        ["flask", "--db-delay", "0,1us,9s"],
        ["flask", "--pin", "0:0:0"],
        ["flask", "--replicas", "1,2,20"],
        ["flask", "--database-url", "postgresql://u:p@h:5432/db?sslmode=disable"],
        ["flask", "--target", "https://h:8443/prefix"],
        ["quart", "--pgbouncer", "--workers", "100"],
        ["flask", "--env", "POOL_TIMEOUT=2"],
        ["flask", "--results", "/tmp/not-made-by-this-test/below"],
        ["flask", "flask_threads", "--fan-out", "1,32", "--upstream-delay", "0,50ms~10ms,989ms"],
        ["flask", "--upstream-delay", "2s", "--env", "UPSTREAM_TIMEOUT=3"],
        ["flask", "--target", "http://h:8000", "--routes", "ratings"],
        ["all"],
    ],
)
def test_good_values_pass(argv):
    options, slots = cli.checked(argv)
    assert options.sut.apps and (slots or options.target)
    assert not (ROOT / "/tmp/not-made-by-this-test").exists()  # checked, not made


def test_the_write_token_file_is_read_once_and_never_shown(tmp_path, capsys, monkeypatch):
    """--write-token-file, or WRITE_TOKEN_FILE: a file of a token the door
    takes, kept as its path (the runs' generators read it); a file of
    something else is refused in one line that shows none of it."""
    token = tmp_path / "write_token"
    token.write_text("t0ken-of-the-door-0123456789abcdefghij\n")
    argv = ["flask", "--target", "http://h:8000", "--write-token-file", str(token)]
    assert cli.checked(argv)[0].runs.write_token_file == str(token)
    monkeypatch.setenv("WRITE_TOKEN_FILE", str(token))
    assert cli.checked(argv[:3])[0].runs.write_token_file == str(token)
    token.write_text("not a token: has spaces and a secret-0123456789\n")
    err = refused(capsys, argv[:3])
    assert "WRITE_TOKEN_FILE" in err and "secret" not in err
    monkeypatch.delenv("WRITE_TOKEN_FILE")
    assert cli.checked(argv[:3])[0].runs.write_token_file is None


@FUZZ
@given(apps=st.lists(not_choices(UNKNOWN_NAME).filter(lambda app: app not in APPS), min_size=1))
def test_unknown_apps_are_refused(apps, capsys):
    assert "unknown app" in refused(capsys, apps)


@FUZZ
@given(
    argv=st.lists(
        st.one_of(
            st.sampled_from(
                [*BAD, "--tune", "--pgbouncer", "--no-pgbench", "--profile", "--help-me"]
            ),
            st.sampled_from([*APPS, "flask_threads", "all", "20", "1s", "auto", "0:0:0", "both"]),
            st.text(max_size=12),
        ),
        max_size=8,
    )
)
def test_any_command_line_runs_or_is_refused_in_one_line(argv, capsys):
    either(capsys, argv)


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["flask", "flask", "flask"], "named three times"),
        (["flask", "--slo", "100ms", "--rate", "100"], "not with --rate"),
        (["flask", "--slo-step", "2s"], "give --slo too"),
        (["flask", "--overload", "2"], "--overload offers multiples of each app's capacity"),
        (["flask", "--spike"], "--spike offers multiples of each app's capacity"),
        (["flask", "--profile"], "--profile samples the apps at --rate's loads"),
        (["quart", "--target", "http://127.0.0.1:1", "--rate", "9", "--profile"], "a --target"),
        (["all", "flask"], "all names every app"),
        (["django"], "unknown app django"),
        (["flask", "quart", "--port", "18000"], "this run starts 2"),
        (["quart", "--target", "http://127.0.0.1:1", "--db-delay", "5ms"], "not with --target"),
        (["quart", "--target", "http://127.0.0.1:1", "--pgbouncer"], "not with --target"),
        (["quart", "--target", "https://h", "--rate", "10"], "plain HTTP"),
        (["flask", "quart", "--tune", "--rate", "10"], "--tune"),
        (["flask", "-c", "5000", "--proxy", "on"], "nginx"),
        (["flask", "-c", "5000", "--replicas", "2"], "nginx"),
        (["flask", "--db-delay", "2s", "--timeout", "2s"], "--timeout"),
        (["flask", "--repeat", "1000", "--duration", "24h", "-c", "1,2,3"], "days"),
        (["flask", "--workers", "100000", "--worker-threads", "100"], "kernel.pid_max"),
        (["flask", "--pgbouncer", "--workers", "3000"], "PgBouncer"),
        (["flask", "--db-connections", str(LIMIT + 1)], "ulimit -n"),
        (["flask", "-c", str(LIMIT - 3), "-t", "2"], "ulimit -n"),
        (["quart", "--target", "http://127.0.0.1:1", "--fan-out", "3"], "not with --target"),
        (["flask", "--routes", "film", "--fan-out", "3"], "add ratings to --routes"),
        (["flask", "--fan-out", "3", "--rate", "auto"], "--rate auto: not with --fan-out"),
        (["flask", "--upstream-delay", "1s"], "UPSTREAM_TIMEOUT"),
        (["flask", "--fan-out", "3", "--env", "UPSTREAM_TIMEOUT=x"], "UPSTREAM_TIMEOUT"),
        (["flask", "--env", "UPSTREAM_FANOUT=http://h"], "--fan-out"),
    ],
)
def test_options_that_cannot_go_together_are_refused_in_one_sentence(argv, reason, capsys):
    assert reason in refused(capsys, argv)


def test_the_files_wrk_opens_are_counted_to_the_limit():
    """wrk -t 2 under `ulimit -n 100` opens 95 connections, not 96."""
    options, _ = cli.checked(["flask"])
    assert refusals.open_files(options) is None
    sized, _ = cli.checked(["flask", "-c", str(LIMIT - 2 - refusals.WRK_OWN_FILES), "-t", "2"])
    assert refusals.open_files(sized) is None


def test_a_port_taken_is_refused_before_anything_starts(capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert "is taken" in refused(capsys, ["flask", "--port", port])
        assert "is taken" in refused(capsys, ["flask", "--port", port], serve.arguments)


SERVE_BAD = st.one_of(
    st.just([]),
    st.lists(st.text(max_size=10).filter(lambda app: app not in APPS), min_size=1, max_size=1),
    BAD["--port"].map(lambda port: ["flask", "--port", port]),
    st.text(max_size=10).map(lambda extra: ["flask", "--proxy", extra or "x"]),
)


@FUZZ
@given(argv=SERVE_BAD)
def test_serve_refuses_every_bad_argument_in_one_line(argv, capsys):
    refused(capsys, argv, serve.arguments)


def test_serve_port_0_is_a_free_one():
    assert serve.arguments(["quart", "--port", "0"]).port > 0


@pytest.mark.parametrize(
    "argv",
    [["flask", "--rate", "1e99"], ["--serve", "flask", "--port", "99999"]],  # the first
)
def test_benchmark_sh_refuses_in_one_line(argv):
    """Through the script: the same line, nothing installed or started."""
    completed = subprocess.run(
        ["./benchmark.sh", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 2, completed.stderr
    assert len(completed.stderr.splitlines()) == 1 and "Traceback" not in completed.stderr
    assert completed.stdout == ""
