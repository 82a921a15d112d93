"""tools/blocking_audit.py, the migration's audit: on a realistic Flask app
(tests/audit_fixture/) it finds every blocking call listed below and nothing
else, each case on its own; it gates on async views only; it finds nothing
in the async apps; it runs from any folder; and the guide quotes it."""

import os
import re
import subprocess
import sys

import pytest

from tools import ROOT
from tools.blocking_audit import audit, main

FIXTURE = "tests/audit_fixture"
# (file, view [hook] -> ... -> call, kind): what the fixture's async views
# make, which stop the event loop ...
ASYNC = [
    ("live.py", "scores -> time.sleep", "sleep"),
    ("live.py", "scores -> requests.get", "http"),
    ("live.py", "stock -> psycopg2.connect", "database"),
    ("live.py", "stock -> cursor.execute", "database"),  # a cursor of that connection
    ("live.py", "stock -> cursor.fetchone", "database"),
]
# ... and its sync views and hooks, which wait in a thread.
SYNC = [
    ("auth.py", "login -> db.session.scalars", "database"),  # not its result's .first()
    ("auth.py", "me -> current_user.orders", "database"),  # a lazy relationship
    ("caching.py", "rates -> @cached -> cache.get", "database"),  # redis, in a decorator
    ("caching.py", "rates -> @cached -> cache.setex", "database"),
    ("catalog.py", "rates -> session.get", "http"),  # a requests.Session of clients.py
    ("files.py", "download -> send_file", "file"),
    ("files.py", "upload -> s3.upload_fileobj", "http"),  # boto3
    ("files.py", "Invoice.get -> Invoice.stored -> s3.list_objects_v2", "http"),  # add_url_rule
    ("orders.py", "list_orders -> User.query.get_or_404", "database"),
    ("orders.py", "list_orders -> user.orders", "database"),  # lazy, of the row loaded
    ("orders.py", "show_order -> db.get_or_404", "database"),
    ("orders.py", "create_order -> db.session.commit", "database"),
    ("orders.py", "create_order -> send_receipt.delay", "broker"),  # Celery
    ("reports.py", "monthly -> render -> subprocess.run", "subprocess"),
    ("reports.py", "monthly -> render -> time.sleep", "sleep"),
    ("reports.py", "monthly -> smtplib.SMTP", "mail"),
    ("reports.py", "monthly -> smtp.sendmail", "mail"),
    ("auth.py", "load_user [user_loader] -> db.session.get", "database"),
    ("hooks.py", "load_tenant [before_request] -> cache.get", "database"),
    ("hooks.py", "server_error [register_error_handler] -> db.session.rollback", "database"),
]
# What does not block, though a name or a library says it might.
BAIT = [
    "counter_lock.acquire",  # threading.Lock
    "parser.fetch",  # an HTMLParser's method
    "fetch_rating",  # a pure function of that name
    "order.lines",  # lazy="joined": loaded with the order
    "order.total",  # the model's method, on the lines loaded
    "db.session.add",
    "db.select",
    ".json",  # of the response session.get() returned
    ".first",  # of the result scalars() returned
    "generate_presigned_url",  # boto3 signs it locally
    "tasks.py",  # runs in the Celery worker, not in a view
    "awaiting",  # awaited, in a thread, or defined and not called
]


def found(path, is_async=None):
    """{(file, chain -> call, kind)} of the audit of path."""
    return {
        (finding.path.rsplit("/", 1)[1], " -> ".join([*finding.chain, finding.call]), finding.kind)
        for entry in audit(path)
        if is_async is None or entry.is_async == is_async
        for finding in entry.findings
    }


@pytest.fixture(autouse=True)
def from_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the paths printed are the paths given


@pytest.mark.parametrize("case", ASYNC, ids=lambda case: case[1])
def test_a_blocking_call_of_an_async_view_is_found_as_async(case):
    assert case in found(FIXTURE, is_async=True)


@pytest.mark.parametrize("case", SYNC, ids=lambda case: case[1])
def test_a_blocking_call_of_a_sync_view_or_hook_is_found_as_sync(case):
    assert case in found(FIXTURE, is_async=False)


@pytest.mark.parametrize("bait", BAIT)
def test_what_does_not_block_is_not_found(bait):
    assert not [case for case in found(FIXTURE) if bait in f"{case[0]}: {case[1]}"]


def test_nothing_else_is_found():
    assert found(FIXTURE) == {*ASYNC, *SYNC}


def test_every_view_and_hook_is_read():
    labels = {entry.label for entry in audit(FIXTURE)}
    assert labels == {
        "login", "me", "rates", "supplier_page", "download", "upload", "Invoice.get",
        "scores", "stock", "awaiting", "list_orders", "show_order", "create_order", "monthly",
        "load_user [user_loader]", "load_tenant [before_request]",
        "server_error [register_error_handler]",
    }  # fmt: skip


def test_the_gate_is_the_async_views(capsys):
    """Exit 1 for an async view's blocking call; a sync view's are printed
    apart, as information, and alone exit 0 (steps 0 to 2, flask_app)."""
    assert main([FIXTURE]) == 1
    out = capsys.readouterr().out
    gate, information = out.split("# sync views and hooks", 1)
    assert gate.count("\n") == 1 + len(ASYNC) and information.count("\n") == 1 + len(SYNC)
    assert main(["flask_app"]) == 0


@pytest.mark.parametrize("app", ["quart_app", "sanic_app"])
def test_the_async_apps_views_block_nothing(app, capsys):
    entries = audit(app)
    assert entries and all(entry.is_async for entry in entries)
    assert not any(entry.findings for entry in entries)
    assert main([app]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("step", [1, 2])
def test_steps_1_and_2_pass_the_gate(step, tmp_path, capsys):
    """Their sync views run on the executor: information, not a failure."""
    expand = ["bash", "docs/migration/steps.sh", "expand", str(tmp_path)]
    subprocess.run(expand, check=True, capture_output=True)
    assert main([str(tmp_path / f"step{step}" / "quart_app")]) == 0
    assert "# async" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [["-m", "tools.blocking_audit"], [str(ROOT / "tools" / "blocking_audit.py")]],
    ids=["module", "script"],
)
def test_it_runs_from_any_folder(command, tmp_path):
    """`python -m` with the project on PYTHONPATH, or the file as a script."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT)) if "-m" in command else None
    ran = subprocess.run(
        [sys.executable, *command, str(ROOT / FIXTURE)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 1, ran.stderr
    assert f"{ROOT / FIXTURE}/live.py:18 scores -> time.sleep (sleep)" in ran.stdout


def test_the_guide_shows_what_it_prints_for_flask_app(capsys):
    page = (ROOT / "docs" / "migration" / "blocking.md").read_text()
    [shown] = re.findall(
        r"^\$ python -m tools.blocking_audit flask_app/films.py\n(.*?)^```$", page, re.M | re.S
    )
    assert main(["flask_app/films.py"]) == 0
    printed = capsys.readouterr()
    assert printed.out == shown
    calls = len(shown.splitlines()) - 1
    summary = f"0 blocking calls in 0 of 0 async views and hooks, {calls} blocking calls in 2 of 2"
    assert printed.err == f"{summary} sync ones, under flask_app/films.py\n"
    assert " ".join(summary.split()) in " ".join(page.split())


def test_a_bad_path_or_file_is_said_in_a_sentence(tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == 2
    assert "no Python to read at" in capsys.readouterr().err
    assert main([]) == 2 and main(["-x"]) == 2
    assert main(["--help"]) == 0 and "python -m tools.blocking_audit" in capsys.readouterr().out
    (tmp_path / "broken.py").write_text("def view(:\n")
    (tmp_path / "fine.py").write_text("@app.get('/')\nasync def view():\n    open('x')\n")
    assert main([str(tmp_path)]) == 1
    printed = capsys.readouterr()
    assert printed.out.splitlines()[1:] == [f"{tmp_path}/fine.py:3 view -> open (file)"]
    assert f"skipped {tmp_path}/broken.py" in printed.err
