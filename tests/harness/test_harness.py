"""The run loop's computing parts, in process: the app list, the route
objects, the rotation, the time estimate, the ratio spread. No database."""

import importlib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench import plan, progress, rotation, write_token
from bench.load import openloop, wrk
from bench.load.openloop.load import request_bytes
from bench.modes import open_loop, server_matrix
from bench.options import Rates
from bench.records import AppRun, Peak, Results, Summary, to_json
from bench.report import tables
from bench.routes import ROUTES
from bench.sut import targets
from bench.sut.budget import Shape
from bench.sut.deployments import TRIAL_STEPS
from bench.sut.lineup import Deployment, connections_needed, lineup, slot
from infra.delays import parse_jittered
from tests.helpers import bench_options
from tools import ROOT
from tools.serve import APPS

# Each route's SQL, by the constant's name in every app's module.
APP_SQL = {"film": ("films", "SELECT_FILM"), "films": ("films", "SELECT_FILMS")}
APP_SQL["review"] = ("reviews", "INSERT_REVIEW")
APP_SQL["ratings"] = ("ratings", "SELECT_FILM_RATINGS")


def test_the_apps_are_declared_once_flask_first():
    folders = sorted(path.parent.name.removesuffix("_app") for path in ROOT.glob("*_app/serve.sh"))
    assert sorted(APPS) == folders and APPS[0] == "flask"


def placeholders_as_marks(sql):
    """%s, $1 and pgbench's :name all become ?, the statement's end dropped."""
    return re.sub(r"%s|\$\d+|:[a-z_]+", "?", sql).rstrip().rstrip(";")


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("key", ROUTES)
def test_pgbench_runs_the_sql_of_every_app(app, key):
    module, name = APP_SQL[key]
    app_sql = getattr(importlib.import_module(f"{app}_app.{module}"), name)
    statement = "\n".join(
        line for line in ROUTES[key].pgbench.splitlines() if not line.startswith("\\set")
    )
    assert placeholders_as_marks(statement) == placeholders_as_marks(app_sql)


def test_wrk_sends_the_body_verification_sends():
    """lua/post.lua posts what follows wrk's "--": the route's body, which
    names the run's film."""
    route = ROUTES["review"].writing_to(1234)
    args = wrk.command("http://127.0.0.1:1", route, 4, 2, 1, 5)
    assert args[-2:] == ["--", '{"film_id": 1234, "rating": 4}']
    assert json.loads(args[-1]) == json.loads(route.body)
    assert "wrk.body = args[1]" in (ROOT / "lua" / route.script).read_text()
    for route in ROUTES.values():
        if not route.body:
            assert "--" not in wrk.command("http://127.0.0.1:1", route, 4, 2, 1, 5)
            assert "wrk.method" not in (ROOT / "lua" / route.script).read_text()


def test_the_write_token_file_is_passed_not_the_token(tmp_path):
    """A write carries the door's token from the file the run names: wrk's
    lua/post.lua reads the file after the body, the open loop reads it
    itself; their command lines (recorded in the results) name the file, and
    a read gets no token."""
    token_file = tmp_path / "write_token"
    token_file.write_text("t0ken-of-the-door-0123456789abcdefghij\n")
    review = ROUTES["review"].writing_to(1234)
    args = wrk.command("http://127.0.0.1:1", review, 4, 2, 1, 5, token_file=token_file)
    assert args[-3:] == ["--", review.body.decode(), str(token_file)]
    assert "io.open(args[2])" in (ROOT / "lua" / review.script).read_text()
    read = wrk.command("http://127.0.0.1:1", ROUTES["film"], 4, 2, 1, 5, token_file=token_file)
    assert str(token_file) not in read
    args = openloop.command("http://h/reviews/", 10, 2, 1, "POST", "{}", token_file=token_file)
    assert f"--write-token-file={token_file}" in args
    assert "t0ken" not in " ".join(args)
    parts = urlsplit("http://h:8002/reviews/")
    payload = request_bytes("POST", parts, "{}", write_token.headers(token_file))
    assert b"\r\nAuthorization: Bearer t0ken-of-the-door-0123456789abcdefghij\r\n" in payload
    assert b"Authorization" not in request_bytes("POST", parts, "{}")


def test_the_rotation_puts_every_app_in_every_place():
    apps = ["flask", "quart", "sanic", "falcon"]
    orders = [rotation.rotation(apps, turn) for turn in range(len(apps))]
    assert all(sorted(order) == sorted(apps) for order in orders)
    for place in range(len(apps)):
        assert sorted(order[place] for order in orders) == sorted(apps)
    assert rotation.rotation([], 3) == []


def test_the_time_left_is_what_each_kind_of_step_really_took(monkeypatch):
    clock = iter([0.0, 100.0, 130.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    counted = progress.Progress({"start": (2, 5), "run": (3, 10)})
    counted.step("start", "start flask")  # at 0: the plan as it stands
    assert counted.left() == 1 * 5 + 3 * 10
    counted.step("run", "flask run 1")  # at 100: a start took 100 s
    assert counted.left() == 1 * 100 + 2 * 10
    counted.step("run", "flask run 2")  # at 130: a run took 30 s
    assert counted.left() == 1 * 100 + 1 * 30


options = bench_options
JITTERED = parse_jittered("50ms~10ms")


def sut(**changes):
    """What bench/sut/targets.py reads of a run's options."""
    return options(**changes).sut


def test_the_plan_counts_every_run_start_and_ceiling():
    assert plan.plan(options(), 4) == {
        "primer": (1, 4 * 3 * 2),  # every app on every route, a warm-up's length, once
        "ceiling": (3, 2),  # bench/modes/ceiling.SECONDS
        "start": (4, progress.STARTUP_SECONDS),
        "run": (2 * 2 * 3 * 5, 8 + 2 + progress.RUN_OVERHEAD_SECONDS),  # apps x deployments x ...
        "rate": (0, 8 + 2 + progress.RUN_OVERHEAD_SECONDS),
    }
    # Per database delay the ceiling; per stage (delay x upstream delay x fan-out)
    # the starts and runs; per delay and upstream delay the rating service's start.
    swept = options(db_delays=(0.0, 0.005), fan_outs=(1, 3), upstream_delays=(JITTERED,) * 3)
    swept = plan.plan(swept, 4)
    assert (swept["ceiling"][0], swept["start"][0]) == (3 * 2, 4 * 2 * 3 * 2)
    assert (swept["run"][0], swept["upstream"][0]) == (2 * 2 * 3 * 5 * 2 * 3 * 2, 2 * 3)
    with_rates = plan.plan(options(rates=Rates((100, 200))), 4)
    assert with_rates["run"][0] == with_rates["primer"][0] == 0
    assert with_rates["rate"][0] == 2 * 2 * 3 * 2
    assert plan.plan(options(rates=Rates(auto=True)), 4)["rate"][0] == 2 * 2 * 3 * 4
    assert plan.plan(options(target="http://127.0.0.1:8000"), 1)["start"][0] == 0
    # --tune: Flask's 4 configurations and Quart's 3, each once per route;
    # then one of each app measured as usual.
    tuned = options(
        tune=True,
        deployments=["sync", "threads4", "threads16", "gevent", "loop1", "loop2", "loop4"],
    )
    tuned = plan.plan(tuned, len(lineup(tuned.sut, 20)))
    # and each then searched for its capacity, at most TRIAL_STEPS rates
    steps = 1 + TRIAL_STEPS
    assert tuned["search"][0] == (4 + 3) * 3 * steps and tuned["run"][0] == 2 * 3 * 5


def test_the_ceiling_is_shorter_than_the_runs_and_says_how_long_it_ran():
    """pgbench runs ceiling.SECONDS (less if --duration is), and the report's
    header says so; a committed result from before, without the duration,
    renders without the line."""
    from bench.modes import ceiling
    from bench.records import load
    from bench.report.markdown import header

    assert ceiling.seconds(options().runs) == ceiling.SECONDS == 2
    assert ceiling.seconds(options(duration=1).runs) == 1
    results = load(ROOT / "docs" / "results" / "2026-11-23-all-both.json")
    assert not any("pgbench:" in line for line in header(results))
    results.pgbench[0].duration_s = 2
    assert "pgbench: 2s per run, each route's SQL." in header(results)


def test_every_pool_of_every_app_started_at_once_fits():
    # 2 cores pinned, a budget of 20 each: article Flask, 1 gevent worker whose
    # psycopg2 blocks it (1 connection), Quart 1 event loop (20); tuned Flask
    # 2 processes of 16 threads (10 each), Quart 2 event loops (10 each).
    assert connections_needed(lineup(sut(), 20)) == 1 + 20 + 20 + 20


def test_behind_pgbouncer_postgres_needs_each_apps_pgbouncer_pool_not_its_pools():
    bounced = options(pgbouncer=True)
    assert connections_needed(lineup(bounced.sut, 8)) == 4 * 8
    # Flask's 2 processes share a budget of 1 through PgBouncer; without it
    # only 1 of them would run.
    tuned = Deployment("tuned")
    assert slot(bounced.sut, "flask", tuned, 1).shape.processes == 2
    assert slot(sut(), "flask", tuned, 1).shape.processes == 1

    def settings(options, app):
        return slot(options.sut, app, tuned, 8).settings

    assert settings(bounced, "quart")["TRANSACTION_POOLING"] == "1"
    # asyncpg's statement cache must go behind it: not undone by --env.
    undone = options(pgbouncer=True, env={"TRANSACTION_POOLING": "0"})
    assert settings(undone, "sanic")["TRANSACTION_POOLING"] == "1"
    assert "TRANSACTION_POOLING" not in settings(options(), "quart")


def measurement(app, rates):
    runs = [{"requests_per_s": rate} for rate in rates]
    summary = Summary(
        len(rates), sorted(rates)[len(rates) // 2], min(rates), max(rates), {}, 0, 0, 0
    )
    return Peak(app, "tuned", 20, "film", summary, runs)


def test_each_ratio_comes_with_its_spread_over_paired_repeats():
    measurements = [measurement("flask", [100, 200, 100]), measurement("quart", [200, 300, 250])]
    [row] = tables.ratio_rows(measurements, [], ["flask", "quart"], ["film"])
    assert row["ratio"]["quart"] == pytest.approx(2.5)  # of the medians
    assert row["ratio_spread"]["quart"] == pytest.approx((1.5, 2.5))  # 300/200, 250/100
    assert tables.ratio_cell(2.5, (1.5, 2.5)) == "2.50x (1.50-2.50)"
    assert tables.ratio_cell(2.5, None) == "2.50x"


def test_the_article_deployment_names_its_servers_from_the_table():
    from bench.sut import deployments
    from bench.sut.servers import PRODUCTION, SERVERS

    assert deployments.server_for("article", "flask") == "gunicorn-gevent"
    assert deployments.server_for("article", "quart") == "hypercorn-uvloop"
    assert deployments.server_for("tuned", "quart") == PRODUCTION
    assert deployments.server_for("waitress", "flask") == "waitress"
    assert deployments.workers("article", "flask", cores=2) == 1
    assert deployments.workers("tuned", "flask", cores=2) == 2
    assert deployments.server_for("article", "falcon") == "gunicorn-sync"
    assert deployments.workers("tornado", "falcon", cores=2) == SERVERS["tornado"].workers(2) == 5
    assert deployments.workers("uvicorn", "sanic", cores=2, override=3) == 3


def pairs(sut):
    """(app, deployment label) of every slot of sut's lineup."""
    return [(slot.app, slot.deployment.label) for slot in lineup(sut, 20)]


def test_a_server_run_pairs_each_app_with_the_servers_of_its_interface():
    found = pairs(sut(apps=["flask", "quart"], deployments=["serve.sh", "waitress", "uvicorn"]))
    assert found == [
        ("flask", "serve.sh"),
        ("quart", "serve.sh"),
        ("flask", "waitress"),
        ("quart", "uvicorn"),
    ]


def test_proxy_both_measures_each_deployment_direct_and_behind_nginx():
    from bench.sut import deployments

    slots = lineup(sut(apps=["flask"], deployments=["tuned"], proxy="both"), 20)
    assert [s.deployment for s in slots] == [Deployment("tuned"), Deployment("tuned", True)]
    assert [s.deployment.label for s in slots] == ["tuned", "tuned+nginx"]
    assert slots[0].shape == slots[1].shape and slots[1].server == deployments.server_for(
        "tuned", "flask"
    )


def test_a_target_started_elsewhere_is_measured_as_it_is():
    target = targets.external(sut(target="http://quart:8000", apps=["quart"]))
    assert (target.app, target.deployment, target.url) == ("quart", "external", "http://quart:8000")
    assert target.record.server is None and target.measurable


def peak_of(deployment, rate, errors=0, app="flask"):
    """flask's closed-loop Peak on the film route, 20 connections."""
    summary = Summary(1, rate, rate, rate, {"p99": 1.0}, int(rate), errors, 0)
    return Peak(app, deployment, 20, "film", summary, [{"requests_per_s": rate}])


def test_rate_auto_offers_every_app_fractions_of_the_slowest_peak():
    peaks = [peak_of("tuned", rate) for rate in (3000, 1000, 2000)]
    auto = open_loop.rates_for(options(rates=Rates(auto=True)), peaks, "tuned", ROUTES["film"])
    assert auto == [250, 500, 750, 900]
    given = open_loop.rates_for(options(rates=Rates((10.0, 20.0))), peaks, "tuned", ROUTES["film"])
    assert given == [10.0, 20.0]


def test_rate_auto_in_a_server_matrix_offers_every_pair_one_rate_from_the_slowest_sane_one():
    peaks = [
        peak_of("gunicorn-sync", 3000),
        peak_of("waitress", 1200),
        peak_of("twisted", 800, errors=3),  # not sane: errors
        peak_of("wsgiref", 400),  # not sane: the floor
    ]
    matrix = options(
        deployments=["gunicorn-sync", "waitress", "twisted", "wsgiref"], rates=Rates(auto=True)
    )
    assert server_matrix.is_matrix(matrix.sut)
    for server in matrix.sut.deployments:  # one rate for every pair: 75% of waitress's peak
        assert open_loop.rates_for(matrix, peaks, server, ROUTES["film"]) == [900]
    slots = lineup(matrix.sut, 20)
    # flask (quart is ASGI) x servers x routes:
    assert plan.plan(matrix, len(slots))["rate"][0] == 4 * 3
    assert not server_matrix.is_matrix(sut(deployments=["waitress"], rates=Rates(auto=True)))


def saved(rates):
    """A results file's JSON, {app: req/s} on the film route."""
    results = Results(
        command="./benchmark.sh flask quart",
        environment={},
        wrk={"routes": ["film"]},
        apps=[AppRun(app, "tuned", "measured") for app in rates],
        measurements=[peak_of("tuned", rate, app=app) for app, rate in rates.items()],
    )
    return to_json(results)


def test_two_runs_compared_ratio_by_ratio(tmp_path):
    from bench import compare

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(saved({"flask": 100, "quart": 200}))
    second.write_text(saved({"flask": 100, "quart": 240}))
    text, worst = compare.compare([first, second])
    assert "| tuned | 20 | GET /films/995/ | quart | 2.00x | 2.40x | ±9% |" in text
    assert worst == pytest.approx(0.4 / 4.4)


def test_published_results_show_commands_as_a_reader_types_them():
    """No absolute path of the machine that ran them (an interpreter, a temporary
    folder) in the command lines of the committed results."""

    from tools import ROOT

    def commands(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key.endswith("command") and isinstance(value, str):
                    yield value
                else:
                    yield from commands(value)
        elif isinstance(node, list):
            for value in node:
                yield from commands(value)

    paths = sorted((ROOT / "docs" / "results").glob("*.json"))
    assert paths
    for path in paths:
        for command in commands(json.loads(path.read_text())):
            absolute = [part for part in command.split() if part.startswith("/")]
            assert not absolute, f"{path.name}: {command}"


def test_what_a_run_may_install_is_pinned_once_beside_requirements_txt():
    """Every server's packages are in requirements.txt or in an extra that
    bench/sut/extras.py installs when a run needs it; requirements.txt
    holds none of the matrix servers or the chart stack (a first
    ./benchmark.sh APP does not wait for them)."""
    from bench.sut import extras
    from bench.sut.servers import SERVERS

    core = extras.pinned("requirements.txt")
    pinned_anywhere = core.union(*map(extras.pinned, extras.FILES))
    for server in SERVERS.values():
        assert {extras.canonical(p) for p in server.packages} <= pinned_anywhere, server.name
    assert {"matplotlib", "gevent", "twisted", "granian", "hdrhistogram", "pytest"}.isdisjoint(core)
    assert "matplotlib" in extras.pinned("requirements-charts.txt")
    assert "hdrhistogram" in extras.pinned("requirements-openloop.txt")
    for path in extras.FILES:  # an extra pins nothing requirements.txt pins otherwise
        for line in (ROOT / path).read_text().splitlines():
            name, _, version = line.partition("==")
            if version and extras.canonical(name) in core:
                assert (
                    f"{name}=={version}".lower() in (ROOT / "requirements.txt").read_text().lower()
                )


def test_each_apps_production_server_is_read_from_its_serve_sh():
    """infra/production.py restates nothing: the workers are serve.sh's
    own default with nproc answering the budget, the rest its exec line."""
    from infra import production

    flask, quart, sanic = (production.read(app) for app in ("flask", "quart", "sanic"))
    assert (flask.program, flask.workers(2), flask.workers(1), flask.holds_thread) == (
        "gunicorn",
        2,
        1,
        True,
    )
    assert (flask.threaded, flask.threads(2), quart.threaded, quart.threads(2)) == (
        True,
        16,
        False,
        1,
    )
    assert (quart.program, quart.workers(2), quart.holds_thread) == ("uvicorn", 2, False)
    assert quart.packages == ["quart", "uvicorn", "uvloop", "httptools", "asyncpg"]
    assert sanic.packages == ["sanic", "uvloop", "httptools", "asyncpg"]
    assert flask.packages == ["flask", "gunicorn", "psycopg2-binary"]


def test_the_matrix_runs_quart_under_uvicorn_as_its_serve_sh_does():
    """SERVERS["uvicorn"] is Quart's serve.sh line (it once dropped --lifespan
    on, the flag the guide says matters); only the values differ."""
    from bench.sut.servers import SERVERS
    from infra import production

    serve_sh = production.read("quart").argv
    matrix = SERVERS["uvicorn"].line.split()
    assert [word for word in serve_sh if word.startswith("-")] == [
        word for word in matrix if word.startswith("-")
    ]
    for option in ("--loop", "--lifespan", "--timeout-graceful-shutdown"):
        assert matrix[matrix.index(option) + 1] == production.read("quart").option(option)
    # The matrix's uvicorn is httptools' protocol as it comes; serve.sh's adds
    # the app's admission to it (common/uvicorn_protocol.py).
    assert matrix[matrix.index("--http") + 1] == "httptools"
    module, _, name = production.read("quart").option("--http").partition(":")
    protocol = getattr(importlib.import_module(module), name)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    assert issubclass(protocol, HttpToolsProtocol)


def test_replicas_make_each_count_a_target_behind_nginx():
    from bench.sut import deployments

    run = options(apps=["flask"], deployments=["tuned"], proxy="both", replicas=(1, 2, 4))
    assert pairs(run.sut) == [
        ("flask", "tuned"),
        ("flask", "tuned x2"),
        ("flask", "tuned x4"),
        ("flask", "tuned+nginx"),
    ]
    slots = lineup(run.sut, 20)
    assert [(s.deployment.copies, s.deployment.nginx) for s in slots] == [
        (1, False),
        (2, True),
        (4, True),
        (1, True),
    ]
    assert deployments.workers("tuned", "flask", cores=2) == 2  # the app's, before the split
    assert [s.shape.processes for s in slots] == [2, 1, 1, 2]


@pytest.mark.parametrize(
    ("whole", "copies", "each"),
    [
        (Shape(5, 1, 1, True), 1, Shape(5, 1, 1, True)),  # one copy: as it is
        (Shape(5, 1, 1, True), 2, Shape(2, 1, 1, True)),  # 2 + 2 sync workers
        (Shape(5, 4, 4, True), 4, Shape(1, 4, 4, True)),  # 1 x 4 threads, 5 connections each
        (Shape(2, 1, 10, False), 2, Shape(1, 1, 10, False)),
        (Shape(2, 1, 10, False), 4, Shape(1, 1, 5, False)),  # a copy needs a process
    ],
)
def test_copies_share_the_apps_workers_and_its_connection_budget(whole, copies, each):
    from bench.sut import budget

    shaped = budget.shaped(whole.processes, whole.threads, whole.holds_thread, 20, copies=copies)
    assert shaped == each
    assert copies * each.connections <= 20 + copies  # no more than the budget, up to rounding
    assert budget.share(3, 4) == 1 and budget.share(7, 2) == 4


def test_the_connections_needed_count_every_copy():
    run = options(apps=["quart"], deployments=["tuned"], pin=None, replicas=(1, 2, 4))
    one = connections_needed(lineup(sut(apps=["quart"], deployments=["tuned"], pin=None), 20))
    assert connections_needed(lineup(run.sut, 20)) == 3 * one


def test_nginx_balances_over_every_port_it_is_given():
    from tools import proxy

    prefix = Path(proxy._prefix([8101, 8102], 8100))
    try:
        config = (prefix / "nginx.conf").read_text()
    finally:
        shutil.rmtree(prefix)
    start = config.index("upstream app {")
    upstream = config[start : config.index("}", start)]
    assert re.findall(r"server (\S+);", upstream) == ["127.0.0.1:8101", "127.0.0.1:8102"]
    assert "keepalive 32;" in upstream and "listen 127.0.0.1:8100 " in config
    assert proxy.upstream_servers(8101) == "server 127.0.0.1:8101;"


def test_the_report_sets_req_s_and_p99_against_replicas():
    from bench.modes import peak, replica_sweep

    peaks = [
        peak_of(d, rate, app=app)
        for app in ("flask", "quart")
        for d, rate in (("tuned", 1000), ("tuned x2", 900))
    ]
    apps = [
        AppRun(app, label, "measured", configuration="tuned", replicas=copies)
        for app in ("flask", "quart")
        for label, copies in (("tuned", 1), ("tuned x2", 2))
    ]
    results = Results("./benchmark.sh flask quart --replicas 1,2", {}, {}, apps, peaks)
    lines = replica_sweep.section(results)
    assert "| app | route | connections | x1: req/s / p99 ms | x2: req/s / p99 ms |" in lines[4]
    assert "| flask (tuned) | GET /films/995/ | 20 | 1,000 / 1.0 | 900 / 1.0 |" in lines[4]
    assert replica_sweep.section(Results("", {}, {}, apps[:1], peaks[:1])) == []
    app = AppRun(
        "flask",
        "tuned x2",
        "measured",
        server_command="sh flask_app/serve.sh (x 2)",
        workers=2,
        pool_size=25,
        db_connections=100,
        proxy="nginx/1.22.1",
        replicas=2,
    )
    line = peak.what_ran(app)
    assert "2 worker(s), pool 25 per copy, x 2 replicas behind nginx/1.22.1 (proxy/api.inc)" in line
    assert ", a budget of 100 connections" in line


def test_a_tuned_rows_memory_names_each_configuration_chosen_in_it():
    from bench.modes.db_delay import memory_of

    rest = {
        ("flask", "threads16", 20.0): AppRun("flask", "threads16", "measured", pss_rest_mib=51.0),
        ("flask", "gevent", 20.0): AppRun("flask", "gevent", "measured", pss_rest_mib=63.0),
    }
    one = {("flask", "threads16", 20.0): [55.0, 58.0]}
    assert memory_of(one, rest) == "51 -> 58"
    both = {**one, ("flask", "gevent", 20.0): [66.0]}
    assert memory_of(both, rest) == "51 -> 58 (threads16); 63 -> 66 (gevent)"
