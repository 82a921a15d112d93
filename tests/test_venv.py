"""scripts/venv.sh, the real script, on a fresh VENV_DIR in a temporary folder:
run several times at once (four `./benchmark.sh --serve APP` on a fresh clone),
every run succeeds and the venv works. A one-package requirements file, pinned
as requirements.txt pins it, keeps it quick."""

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from tools import ROOT

pytestmark = pytest.mark.slow  # runs bash and pip, four at once, and makes a venv

RUNS = 4
PACKAGE = "blinker"  # small, pure Python, and in requirements.txt


def pin(package):
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return next(line for line in lines if line.lower().startswith(f"{package}=="))


def venv_sh(tmp_path, requirements):
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "venv.sh"), requirements.name],
        cwd=tmp_path,
        env={**os.environ, "VENV_DIR": str(tmp_path / "venv")},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_concurrent_runs_make_one_working_venv(tmp_path):
    requirements = tmp_path / "requirements-one.txt"
    requirements.write_text(pin(PACKAGE) + "\n")

    with ThreadPoolExecutor(RUNS) as executor:
        runs = list(executor.map(lambda _: venv_sh(tmp_path, requirements), range(RUNS)))

    assert [run.returncode for run in runs] == [0] * RUNS, [run.stderr for run in runs]
    # One run created and filled the venv; the others waited for it, then had
    # nothing left to do.
    stderr = "".join(run.stderr for run in runs)
    assert stderr.count("Creating") == 1 and stderr.count("Installing") == 1, stderr
    python = tmp_path / "venv" / "bin" / "python"
    version = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version('{PACKAGE}'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert f"{PACKAGE}=={version}" == pin(PACKAGE)
    subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, check=True)
    # And a later run finds it up to date: quiet, no lock needed.
    again = venv_sh(tmp_path, requirements)
    assert (again.returncode, again.stderr) == (0, "")
