"""Two runs never share a results folder: each makes its own,
results/<time>-<apps>/, by mkdir, and the second of a second takes -2."""

import json
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench import folder
from bench.errors import BenchmarkError
from db import embedded
from tools import ROOT
from tools.serve import running


def test_runs_started_together_get_a_folder_each(tmp_path):
    runs = 8
    together = threading.Barrier(runs)

    def start():
        together.wait()
        return folder.made(tmp_path / "results", "20260101-120000-flask-quart")

    with ThreadPoolExecutor(runs) as executor:
        made = list(executor.map(lambda _: start(), range(runs)))
    names = sorted(path.name for path in made)
    assert names == sorted(
        ["20260101-120000-flask-quart"] + [f"20260101-120000-flask-quart-{n}" for n in range(2, 9)]
    )
    assert all(path.is_dir() and not any(path.iterdir()) for path in made)


def test_a_name_taken_by_a_file_is_passed_over_and_nothing_is_overwritten(tmp_path):
    (tmp_path / "run").write_text("someone's")
    assert folder.made(tmp_path, "run") == tmp_path / "run-2"
    assert (tmp_path / "run").read_text() == "someone's"


def test_a_folder_that_cannot_be_made_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(BenchmarkError, match="no folder for the results in"):
        folder.made(tmp_path / "file" / "results", "run")


@pytest.mark.slow  # two ./benchmark.sh runs and a server
def test_two_runs_started_at_once_write_two_sets_of_files(database_url, tmp_path):
    """Measuring one server already running, GET only: no database of the
    runs' own (no DATABASE_URL: the nothing-lost check has no POST to count)."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    port = embedded.free_port()
    with running("quart", port, database_url, tmp_path / "quart.log", web_workers=1) as server:
        command = ["./benchmark.sh", "quart", "--target", server.url, "--routes", "film"]
        command += ["--duration", "1s", "--warmup", "0", "--results", str(tmp_path / "results")]
        runs = [
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=180)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    folders = sorted((tmp_path / "results").iterdir())
    assert len(folders) == 2
    for folder_of_a_run in folders:
        name = folder_of_a_run.name
        report = json.loads((folder_of_a_run / f"{name}.json").read_text())
        assert report["measurements"]
        assert (folder_of_a_run / f"{name}.md").exists()
        assert (folder_of_a_run / f"{name}.log").exists()
