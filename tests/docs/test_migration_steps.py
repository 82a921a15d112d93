"""Every state of the code that docs/migration.md offers ships: the four steps
(docs/migration/step1.patch ... step4.patch, applied in order to a copy of
flask_app/) end at quart_app/ byte for byte, and each state before the last,
and each alternative of docs/examples/ (flask_async.patch, quart_psycopg.patch,
quart_httpx.patch), serves the contract (every case of tests/contract/test_contract.py:
status, body, database state; and tests/contract/test_ratings.py's cases of the route
that waits on other services, hostile sources among them) under its own serve.sh, on
the real Postgres."""

import difflib
import importlib.util
import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
import requests

from common.settings import Settings
from db import embedded
from infra import apps, production
from tests.contract.test_contract import (  # noqa: F401 (collected here, against each state)
    test_chunked_body_too_large,
    test_errors,
    test_get_film,
    test_get_films,
    test_head_is_get_without_body,
    test_health,
    test_post_review,
    test_post_review_accepts,
)
from tests.contract.test_ratings import (  # noqa: F401 (the ratings' contract cases, the same way)
    SOURCE_SETTINGS,
    test_a_source_cannot_steer_or_hold_the_app,
    test_a_source_that_fails_is_null_and_named,
    test_every_source_failed,
    test_every_source_up,
)
from tests.corpus import REVIEW
from tests.helpers import wait_until
from tests.upstream_thread import UpstreamThread
from tools import ROOT
from tools.serve import TREE_COMMAND, AppNotStarted, running, tree_settings

STEPS = ROOT / "docs" / "migration" / "steps.sh"
# tree (a folder made by steps.sh expand), package: the states the guide offers
STATES = {
    "step1": "quart_app",
    "step2": "quart_app",
    "step3": "quart_app",
    "flask-async": "flask_app",
    "quart-psycopg": "quart_psycopg",
    "quart-httpx": "quart_app",
}
# The tree's package comes first on sys.path (gunicorn and uvicorn put their
# working directory there); the project's common/ is found through PYTHONPATH.


def files(directory):
    return {
        path.relative_to(directory): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """step0/quart_app (flask_app's copy) ... step4/quart_app, and the alternatives."""
    directory = tmp_path_factory.mktemp("migration")
    subprocess.run(["bash", str(STEPS), "expand", str(directory)], check=True)
    return directory


def test_the_steps_end_at_quart_app(trees):
    assert files(trees / "step4" / "quart_app") == files(ROOT / "quart_app")


def test_the_steps_start_from_flask_app(trees):
    assert files(trees / "step0" / "quart_app") == files(ROOT / "flask_app")


def changed_lines(old, new):
    """Lines added plus removed from package old to package new, blank ones too."""
    count = 0
    for name in sorted({path.name for path in [*old.iterdir(), *new.iterdir()]} - {"__pycache__"}):
        before = (old / name).read_text().splitlines() if (old / name).exists() else []
        after = (new / name).read_text().splitlines() if (new / name).exists() else []
        diff = difflib.unified_diff(before, after, lineterm="", n=0)
        count += sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    return count


def test_the_guide_states_the_diff_sizes(trees):
    """psycopg 3 against asyncpg, in lines changed from flask_app/."""
    guide = " ".join((ROOT / "docs" / "migration" / "alternatives.md").read_text().split())
    psycopg = changed_lines(ROOT / "flask_app", trees / "quart-psycopg" / "quart_psycopg")
    asyncpg = changed_lines(ROOT / "flask_app", ROOT / "quart_app")
    assert f"`flask_app/` is {psycopg} changed lines" in guide
    assert f"`quart_app/`'s is {asyncpg}" in guide


@pytest.mark.parametrize("tree", STATES)
def test_every_state_is_lint_clean(trees, tree):
    """They are code a team ships: the project's own ruff rules hold."""
    package = trees / tree / STATES[tree]
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--config", ROOT / "pyproject.toml", package],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, f"{tree}: ruff {command[0]}\n{result.stdout}"


@pytest.fixture(scope="module", params=STATES)
def server(request, trees, database_url, tmp_path_factory):
    """The app in that state, under its own serve.sh, two workers."""
    port = embedded.free_port()
    log = tmp_path_factory.mktemp("logs") / f"{request.param}-{port}.log"
    settings = {
        "tree": trees / request.param,
        "package": STATES[request.param],
        "pythonpath": ROOT,
        "web_workers": 2,
        **SOURCE_SETTINGS,
    }
    app = "flask" if STATES[request.param] == "flask_app" else "quart"  # for the log only
    try:
        with running(app, port, database_url, log, command=TREE_COMMAND, **settings) as server:
            yield server
    except AppNotStarted as error:
        pytest.fail(str(error))


@pytest.fixture(scope="module")
def app_url(server):
    """(name, url) of the state, as tests/contract/test_ratings.py's tests take it."""
    return server.app, server.url


SERVE = "bash docs/migration/steps.sh serve 2 --port 8000"
# What serves each step, read back from the running server: (program, gunicorn's worker class)
SERVERS = {0: ("gunicorn", "gthread"), 1: ("gunicorn", "asgi"), 2: ("gunicorn", "asgi")}
SERVERS |= {3: ("gunicorn", "asgi"), 4: ("uvicorn", None)}


@pytest.mark.slow
@pytest.mark.parametrize("step", SERVERS)
def test_a_step_is_served_by_the_guides_command(step, database_url, tmp_path):
    """The guide's one command for a step, run as written but for the step and
    a free port: it serves that step, which the server's own process says (its
    working folder is the step's tree, its command line the step's server),
    its film and review routes answer, and SIGTERM, as Ctrl-C, stops the
    server and removes the step's temporary folder."""
    assert SERVE in " ".join((ROOT / "docs" / "migration.md").read_text().split())
    port = embedded.free_port()
    argv = [*SERVE.split()[:-3], str(step), "--port", str(port)]
    env = {**os.environ, "DATABASE_URL": database_url, "TMPDIR": str(tmp_path)}
    shell = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        for line in shell.stdout:  # until it says it serves, or ends
            if f"serves http://127.0.0.1:{port}" in line:
                break
        server = server_process(shell.pid)
        assert Path(server.cwd()).name == f"step{step}"
        assert running_server(server.cmdline()) == SERVERS[step]
        film = requests.get(f"http://127.0.0.1:{port}/films/995/", timeout=10)
        assert film.status_code == 200 and film.json()["film_id"] == 995
        review = requests.post(
            f"http://127.0.0.1:{port}/reviews/",
            json=REVIEW,
            timeout=10,
        )
        assert review.status_code == 201, review.text
    finally:
        shell.terminate()
        shell.wait(timeout=30)
    assert wait_until(lambda: not listening(port), 10)
    assert list(tmp_path.iterdir()) == []


def server_process(pid):
    """The app server among pid's descendants: the master that serve.sh execs."""
    [master] = [
        process
        for process in psutil.Process(pid).children(recursive=True)
        if running_server(process.cmdline())[0]
        and not running_server(process.parent().cmdline())[0]
    ]
    return master


def running_server(argv):
    """(program, gunicorn's --worker-class or None) of a process' argv; the
    program None if it is neither gunicorn nor uvicorn."""
    programs = [Path(word).name for word in argv[:2]]
    program = next((name for name in programs if name in ("gunicorn", "uvicorn")), None)
    worker_class = argv[argv.index("--worker-class") + 1] if "--worker-class" in argv else None
    return program, worker_class


def test_expand_refuses_a_used_folder(tmp_path):
    """Expanding again into a folder would patch its trees twice (and lose
    the edits made there): refused in one line that names the folder, and
    nothing in it changed."""
    (tmp_path / "edited.txt").write_text("kept")
    result = subprocess.run(
        ["bash", str(STEPS), "expand", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and str(tmp_path) in result.stderr
    assert [path.name for path in tmp_path.iterdir()] == ["edited.txt"]


def listening(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def step_module(trees, tree, name):
    """A module of a step's package, imported under a name of its own (the
    package is quart_app, as the project's own)."""
    path = trees / tree / "quart_app" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{tree}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("pool_max", "pool_min"), [(20, 0), (20, 20), (5, 3), (2, 1)])
def test_step_2s_two_pools_share_the_budget(trees, pool_max, pool_min):
    """Step 2's psycopg2 pool and asyncpg pool together hold POOL_MAX_SIZE at
    most, and open POOL_MIN_SIZE at least, the odd one the sync views'."""
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://x/y",
            "POOL_MAX_SIZE": str(pool_max),
            "POOL_MIN_SIZE": str(pool_min),
        }
    )
    sync, asynchronous = step_module(trees, "step2", "db").shares(settings)
    assert sync.pool_max_size + asynchronous.pool_max_size == pool_max
    assert sync.pool_min_size + asynchronous.pool_min_size == pool_min
    assert sync.pool_max_size - asynchronous.pool_max_size in (0, 1)
    for share in (sync, asynchronous):
        assert 0 <= share.pool_min_size <= share.pool_max_size and share.pool_max_size >= 1


def test_step_2_refuses_a_budget_two_pools_cannot_share(trees):
    settings = Settings.from_env({"DATABASE_URL": "postgresql://x/y", "POOL_MAX_SIZE": "1"})
    with pytest.raises(ValueError, match="^POOL_MAX_SIZE must be 2 or more"):
        step_module(trees, "step2", "db").shares(settings)


def test_web_threads_is_flasks_threads_read_once():
    """One knob for the threads that run sync code: Settings reads WEB_THREADS
    with the default Flask's serve.sh gives gunicorn's gthread, and refuses a
    count that is not one, naming it."""
    default = Settings.from_env({"DATABASE_URL": "postgresql://x/y"}).web_threads
    assert default == production.read("flask").threads(cores=2) == 16
    for text in ("0", "-3", "two", "1.5", ""):
        rule = r"^WEB_THREADS=.*: must be a whole number, 1 or more$"
        with pytest.raises(ValueError, match=rule):
            Settings.from_env({"DATABASE_URL": "postgresql://x/y", "WEB_THREADS": text})


def worker_of(server):
    """The one worker process of a server started with WEB_WORKERS=1."""
    [worker] = psutil.Process(server.process.pid).children()  # serve.sh execs the server
    return worker


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["step1", "step2"])
def test_the_sync_views_run_on_web_threads(trees, tree, database_url, tmp_path):
    """Quart runs the sync views on the loop's default executor, sized by
    WEB_THREADS as Flask's gthread is, not by Python's min(32, cores + 4). One
    worker, the ratings route waiting 0.3 s on its sources, three times
    WEB_THREADS requests at once: the worker then runs its loop's thread and
    WEB_THREADS others, no more. (Counted at the end, not as a gain over the
    start: the executor threads a worker's start leaves were one in one
    checkout and two in another, from the same code.)"""
    threads = min(32, os.cpu_count() + 4) + 4  # above Python's default
    ports = [embedded.free_port() for _ in range(3)]
    settings = {
        **tree_settings(trees / tree, "quart"),
        "web_workers": 1,
        "web_threads": threads,
        "upstream_fanout": " ".join(f"http://127.0.0.1:{port}" for port in ports),
        "upstream_timeout": 5,
    }
    log = tmp_path / "server.log"
    with (
        UpstreamThread(ports, "300ms"),
        running(
            "quart", embedded.free_port(), database_url, log, command=TREE_COMMAND, **settings
        ) as server,
    ):
        worker = worker_of(server)
        url = f"{server.url}/films/995/ratings/"
        with ThreadPoolExecutor(3 * threads) as clients:
            answers = list(clients.map(lambda _: requests.get(url, timeout=30), range(3 * threads)))
        assert [answer.status_code for answer in answers] == [200] * len(answers)
        assert worker.num_threads() == 1 + threads, server.log_tail()


@pytest.mark.slow
def test_step_2_holds_no_more_connections_than_the_budget(trees, database_url, tmp_path):
    """POOL_MIN_SIZE = POOL_MAX_SIZE: each pool opens its share at once, and the
    worker holds POOL_MAX_SIZE connections to Postgres, not two budgets."""
    budget = 5
    settings = {
        **tree_settings(trees / "step2", "quart"),
        "web_workers": 1,
        "pool_max_size": budget,
        "pool_min_size": budget,
    }
    postgres_port = urlsplit(database_url).port
    log = tmp_path / "server.log"
    with running(
        "quart", embedded.free_port(), database_url, log, command=TREE_COMMAND, **settings
    ) as server:
        worker = worker_of(server)
        assert requests.get(f"{server.url}/films/995/", timeout=10).status_code == 200  # asyncpg

        def held():
            return [
                connection
                for connection in worker.net_connections(kind="tcp")
                if connection.raddr and connection.raddr.port == postgres_port
            ]

        assert wait_until(lambda: len(held()) == budget, 10), (held(), server.log_tail())


def test_steps_1_to_3_are_apps_the_harness_measures(trees, tmp_path):
    """`steps.sh apps DIR`: each step an app of its own (infra/apps.py reads
    DIR/stepN_app/app.toml), its package the step's tree renamed, served by
    the step's own serve.sh, so that APPS_PATH=DIR ./benchmark.sh flask step1
    step2 step3 quart measures every state of the guide side by side."""
    subprocess.run(["bash", str(STEPS), "apps", str(tmp_path)], check=True, capture_output=True)
    found = apps.scan([tmp_path])
    assert list(found) == ["step1", "step2", "step3"]
    assert [app.fan_out for app in found.values()] == ["sequential", "sequential", "concurrent"]
    for step, app in enumerate(found.values(), start=1):
        renamed = {
            path: text.replace(f"step{step}_app".encode(), b"quart_app")
            for path, text in files(app.folder).items()
            if path.name != "app.toml"
        }
        expected = files(trees / f"step{step}" / "quart_app")
        assert renamed == {path: text for path, text in expected.items() if path.name != "app.toml"}
        assert f"'step{step}_app:create_app()'" in app.serve.read_text()
