"""scripts/venv.sh, the real script, on a fresh VENV_DIR in a temporary folder:
run several times at once (four `./benchmark.sh --serve APP` on a fresh clone),
every run succeeds and the venv works. A one-package requirements file, pinned
as requirements.txt pins it, keeps it quick. And the requirements files are
closed, as the script's --no-deps needs."""

import importlib.metadata
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.sut.extras import canonical, pinned
from tools import ROOT

pytestmark = pytest.mark.slow  # runs bash and pip, four at once, and makes a venv

RUNS = 4
PACKAGE = "blinker"  # small, pure Python, and in requirements.txt
# Installed into .venv by ./test.sh; requirements-scanners.txt goes to a venv
# of its own (.venv-scanners), checked by pip check below.
SCANNERS = "requirements-scanners.txt"
REQUIREMENTS = sorted(path for path in ROOT.glob("requirements*.txt") if path.name != SCANNERS)


def pin(package):
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return next(line for line in lines if line.lower().startswith(f"{package}=="))


def venv_sh(tmp_path, *requirements):
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "venv.sh"), *(path.name for path in requirements)],
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
    # Several files: only those out of date are installed, each keeps its stamp.
    other = tmp_path / "requirements-other.txt"
    other.write_text(pin("itsdangerous") + "\n")
    both = venv_sh(tmp_path, requirements, other)
    assert both.returncode == 0 and "from requirements-other.txt into" in both.stderr, both.stderr
    assert venv_sh(tmp_path, other, requirements).stderr == ""


def unmet(names):
    """What the installed distributions `names` (canonical) require, on this
    interpreter, that is not among them at a version they accept: the
    dependencies, with their extras, that pip's --no-deps would leave out."""
    from packaging.requirements import Requirement

    gaps, seen, todo = [], set(), [(name, ("",)) for name in names]
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        for text in importlib.metadata.requires(name) or []:
            needed = Requirement(text)
            if needed.marker and not any(needed.marker.evaluate({"extra": e}) for e in extras):
                continue
            dependency = canonical(needed.name)
            if dependency not in names:
                gaps.append(f"{name} needs {needed}")
            elif not needed.specifier.contains(importlib.metadata.version(dependency), True):
                gaps.append(f"{name} needs {needed}, has {importlib.metadata.version(dependency)}")
            elif needed.extras:
                todo.append((dependency, ("", *sorted(needed.extras))))
    return gaps


@pytest.mark.parametrize("path", REQUIREMENTS, ids=lambda path: path.name)
def test_each_requirements_file_is_closed_over_requirements_txt(path):
    """scripts/venv.sh installs with --no-deps: sound only if each file, with
    requirements.txt, pins everything its distributions require. Checked on the
    .venv ./test.sh made (every file installed), against this interpreter's
    markers."""
    names = pinned("requirements.txt") | pinned(path.name)
    assert not unmet(names), unmet(names)


def test_the_scanners_venv_is_closed():
    """requirements-scanners.txt pins all Checkov needs: pip check in the
    venv ./test.sh made from it alone."""
    python = ROOT / ".venv-scanners" / "bin" / "python"
    if not python.exists():
        pytest.skip("no .venv-scanners: ./test.sh makes it")
    completed = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
