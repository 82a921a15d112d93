"""A setting an app cannot use (common/settings.py) is refused in one line on
stderr, the same line in every app, with a non-zero exit status, before its
server starts: each serve.sh runs `python -m common.settings` first. Without
it gunicorn printed a traceback per worker (78 lines), uvicorn up to 650
lines, Sanic a 33-line box, each its own. Fast: the rule of every setting, in
process. Slow: every setting refused by every app's real serve.sh."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.settings import Settings
from infra import ROOT, apps
from infra.ports import free_port
from tools import children

VARIANT = apps.scan([ROOT / "variants"])["flask_threads"]
URL = "postgresql://films_app@db/dvdrental"
PATIENCE = 20.0  # seconds a refusal may take on a shared machine, generously

# id: (the environment, as the apps are given it; the one line each refuses
# it with). {folder} is a folder of the test's own (a password file's).
BAD = {
    "no-database-url": ({}, "DATABASE_URL is not set: it is required"),
    "password-file-missing": (
        {"DATABASE_URL": URL, "DATABASE_PASSWORD_FILE": "{folder}/none"},
        "DATABASE_PASSWORD_FILE='{folder}/none': cannot be read: No such file or directory",
    ),
    "password-file-empty": (
        {"DATABASE_URL": URL, "DATABASE_PASSWORD_FILE": "{folder}/empty"},
        "DATABASE_PASSWORD_FILE='{folder}/empty': is empty, where its first line is the password",
    ),
    "password-file-not-text": (
        {"DATABASE_URL": URL, "DATABASE_PASSWORD_FILE": "{folder}/binary"},
        "DATABASE_PASSWORD_FILE='{folder}/binary': is not text",
    ),
    "password-twice": (
        {
            "DATABASE_URL": "postgresql://films_app:inline@db/dvdrental",
            "DATABASE_PASSWORD_FILE": "{folder}/password",
        },
        "DATABASE_PASSWORD_FILE='{folder}/password': DATABASE_URL holds a password too: "
        "give one of them",
    ),
    "pool-min-not-a-number": (
        {"POOL_MIN_SIZE": "two"},
        "POOL_MIN_SIZE='two': must be a whole number, 0 or more",
    ),
    "pool-min-negative": (
        {"POOL_MIN_SIZE": "-1"},
        "POOL_MIN_SIZE='-1': must be a whole number, 0 or more",
    ),
    "pool-max-zero": (
        {"POOL_MAX_SIZE": "0"},
        "POOL_MAX_SIZE='0': must be a whole number, 1 or more",
    ),
    "pool-max-a-fraction": (
        {"POOL_MAX_SIZE": "2.5"},
        "POOL_MAX_SIZE='2.5': must be a whole number, 1 or more",
    ),
    "pool-min-above-max": (
        {"POOL_MIN_SIZE": "8", "POOL_MAX_SIZE": "4"},
        "POOL_MIN_SIZE='8': must be at most POOL_MAX_SIZE's 4",
    ),
    "pool-timeout": (
        {"POOL_TIMEOUT": "soon"},
        "POOL_TIMEOUT='soon': must be a number of seconds above 0",
    ),
    "database-timeout": (
        {"DATABASE_TIMEOUT": "0"},
        "DATABASE_TIMEOUT='0': must be a number of seconds above 0",
    ),
    "upstream-timeout": (
        {"UPSTREAM_TIMEOUT": "inf"},
        "UPSTREAM_TIMEOUT='inf': must be a number of seconds above 0",
    ),
    "queue-budget": (
        {"QUEUE_BUDGET": "-0.05"},
        "QUEUE_BUDGET='-0.05': must be a number of seconds, 0 (none) or more",
    ),
    "transaction-pooling": (
        {"TRANSACTION_POOLING": "yes"},
        "TRANSACTION_POOLING='yes': must be 1 (on) or 0 (off)",
    ),
    "fanout-a-file": (
        {"UPSTREAM_FANOUT": "file:///etc/passwd"},
        "UPSTREAM_FANOUT='file:///etc/passwd': not an http(s) base URL: 'file:///etc/passwd'",
    ),
    "fanout-no-scheme": (
        {"UPSTREAM_FANOUT": "upstream:9001"},
        "UPSTREAM_FANOUT='upstream:9001': not an http(s) base URL: 'upstream:9001'",
    ),
    "fanout-gopher": (
        {"UPSTREAM_FANOUT": "http://upstream:9001 gopher://upstream:70"},
        "UPSTREAM_FANOUT='http://upstream:9001 gopher://upstream:70': "
        "not an http(s) base URL: 'gopher://upstream:70'",
    ),
    "fanout-port": (
        {"UPSTREAM_FANOUT": "http://upstream:99999"},
        "UPSTREAM_FANOUT='http://upstream:99999': not an http(s) base URL: 'http://upstream:99999'",
    ),
    "fanout-twice": (
        {"UPSTREAM_FANOUT": "http://upstream:9001,http://upstream:9001/"},
        "UPSTREAM_FANOUT='http://upstream:9001,http://upstream:9001/': names a source twice",
    ),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Where the password files are: none, an empty one, one not text, one
    with a password."""
    folder = tmp_path_factory.mktemp("settings")
    (folder / "empty").write_text("")
    (folder / "binary").write_bytes(b"\xff\xfe\x00")
    (folder / "password").write_text("from-the-file\n")
    return folder


def case(name, folder):
    """(the environment, the line) of BAD[name], in folder."""
    environ, line = BAD[name]
    environ = {"DATABASE_URL": URL, **environ} if name != "no-database-url" else environ
    return (
        {key: value.format(folder=folder) for key, value in environ.items()},
        line.format(folder=folder),
    )


@pytest.mark.parametrize("name", BAD)
def test_a_bad_setting_is_one_line_naming_it(name, folder):
    environ, line = case(name, folder)
    with pytest.raises(ValueError) as refused:
        Settings.from_env(environ)
    assert str(refused.value) == line


def serve(app, environ):
    """Run app's serve.sh with environ and nothing else of the apps'; (exit
    status, stdout, stderr). Whatever it started is stopped: a server that
    started, or a refusal that hung, fails the test by its status."""
    declared = VARIANT if app == VARIANT.name else apps.get(app)
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": declared.pythonpath,
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        "WEB_WORKERS": "1",
        **environ,
    }
    process = subprocess.Popen(
        declared.serve_command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        out, err = "", f"still running after {PATIENCE}s"
    finally:
        children.stop(process, timeout=1)
    return process.returncode, out, err


@pytest.mark.slow
@pytest.mark.parametrize("name", BAD)
def test_every_app_refuses_it_in_the_same_one_line(name, folder):
    """Each app's serve.sh (Flask's thread-pool variant's too): exit 2, that
    one line on stderr, nothing on stdout, within PATIENCE (no server
    started: none to loop restarting its workers, or to hang)."""
    environ, line = case(name, folder)
    answers = {app: serve(app, environ) for app in [*apps.names(), VARIANT.name]}
    assert answers == {app: (2, "", line + "\n") for app in answers}
