"""The runtime check of docs/migration.md's "Blocking calls": under uvicorn,
docs/examples/loop_debug.py's view that blocks the loop makes asyncio log
the line the guide quotes; PYTHONASYNCIODEBUG=1 alone logs nothing there on
Python 3.11, for uvicorn sets the loop's debug mode off (the guide says so)."""

import os
import re
import subprocess
import sys
import urllib.request

import pytest

from db.embedded import free_port
from docs.examples.loop_debug import BLOCKED
from tools import ROOT
from tools.serve import stop, wait_healthy

pytestmark = pytest.mark.slow  # it starts a server


def logged(app, tmp_path, **environment):
    """What uvicorn, serving app on uvloop as quart_app/serve.sh does, wrote
    to stderr after one GET /blocking."""
    port, log = free_port(), tmp_path / "stderr"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--loop", "uvloop"],
            cwd=ROOT,
            env=dict(os.environ, **environment),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            wait_healthy(process, f"http://127.0.0.1:{port}", timeout=30)
            urllib.request.urlopen(f"http://127.0.0.1:{port}/blocking", timeout=10).read()
        finally:
            stop(process)
    return log.read_text()


def quoted():
    """The log line docs/migration.md shows, as a pattern: "..." is any text,
    a number any number."""
    guide = (ROOT / "docs" / "migration.md").read_text()
    [line] = re.findall(r"^Executing <Task .*$", guide, re.M)
    pattern = re.escape(line).replace(re.escape("..."), ".*")
    return re.compile(re.sub(r"\d+", r"\\d+", pattern))


def test_the_guide_quotes_what_asyncio_logs(tmp_path):
    log = logged("docs.examples.loop_debug:app", tmp_path)
    [line] = [line for line in log.splitlines() if line.startswith("Executing <Task")]
    assert quoted().fullmatch(line), line
    seconds = float(re.search(r"took (\d+\.\d+) seconds$", line)[1])
    assert BLOCKED <= seconds < BLOCKED + 0.5


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="uvicorn leaves debug mode alone")
def test_the_environment_alone_is_not_enough_under_uvicorn(tmp_path):
    log = logged("docs.examples.blocking_trap:app", tmp_path, PYTHONASYNCIODEBUG="1")
    assert "Executing <Task" not in log
