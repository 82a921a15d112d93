"""The migration guide's path ships at every step: docs/migration/step1.patch
... step4.patch, applied in order to a copy of flask_app/, end at quart_app/
byte for byte, and each state before the last serves the contract (every case
of tests/test_contract.py: status, body, database state) under its real server
(gunicorn's ASGI worker, serve.sh of that step), on the real Postgres."""

import subprocess
import sys

import pytest

from db import embedded
from tests.test_contract import (  # noqa: F401 (collected here, against each step)
    test_chunked_body_too_large,
    test_errors,
    test_get_film,
    test_get_films,
    test_head_is_get_without_body,
    test_health,
    test_post_review,
    test_post_review_accepts,
)
from tools import ROOT
from tools.serve import AppNotStarted, running

STEPS = ROOT / "docs" / "migration" / "steps.sh"
# The step's own quart_app/ comes first on sys.path (gunicorn puts its working
# directory there); the project's common/ is found through PYTHONPATH.
COMMAND = ["sh", "-c", 'cd "$STEP_DIR" && exec sh quart_app/serve.sh']


def files(directory):
    return {
        path.relative_to(directory): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    """A directory holding step0/quart_app (flask_app's copy) ... step4/quart_app."""
    directory = tmp_path_factory.mktemp("migration")
    subprocess.run(["bash", str(STEPS), "expand", str(directory)], check=True)
    return directory


def test_the_steps_end_at_quart_app(steps):
    assert files(steps / "step4" / "quart_app") == files(ROOT / "quart_app")


def test_the_steps_start_from_flask_app(steps):
    assert files(steps / "step0" / "quart_app") == files(ROOT / "flask_app")


@pytest.fixture(scope="module", params=[1, 2, 3], ids=lambda step: f"step{step}")
def server(request, steps, database_url, tmp_path_factory):
    """The app as step N leaves it, under that step's serve.sh, two workers."""
    port = embedded.free_port()
    log = tmp_path_factory.mktemp("logs") / f"step{request.param}-{port}.log"
    settings = {"step_dir": steps / f"step{request.param}", "pythonpath": ROOT, "web_workers": 2}
    try:
        with running("quart", port, database_url, log, command=COMMAND, **settings) as server:
            yield server
    except AppNotStarted as error:
        pytest.fail(str(error))


def test_every_step_is_lint_clean(steps):
    """The steps are code a team ships: the project's own ruff rules hold."""
    for step in (1, 2, 3):
        tree = steps / f"step{step}" / "quart_app"
        for command in (["check"], ["format", "--check"]):
            result = subprocess.run(
                [sys.executable, "-m", "ruff", *command, "--config", ROOT / "pyproject.toml", tree],
                capture_output=True,
                text=True,
            )
            assert result.returncode == 0, f"step{step}: ruff {command[0]}\n{result.stdout}"
