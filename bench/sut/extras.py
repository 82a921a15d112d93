"""What a run installs when it needs it: the requirements files beside
requirements.txt (requirements.in says which holds what), each installed into
this interpreter's venv by scripts/venv.sh the first time a run needs one of
the distributions it pins: the matrix servers when --server names them, the
open-loop generator's histograms with --rate, py-spy with --profile, the chart stack before the
charts if benchmark.sh did not install it (a venv made by --serve). So a first
./benchmark.sh APP installs the apps and its own tools, not every server of
the matrix."""

import functools
import importlib
import importlib.metadata
import os
import re
import subprocess
import sys

from bench.errors import BenchmarkError
from infra import ROOT

FILES = (
    "requirements-servers.txt",
    "requirements-charts.txt",
    "requirements-openloop.txt",
    "requirements-profile.txt",
)


def canonical(name):
    """A distribution's name as pip compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def pinned(path):
    """The distributions a requirements file pins, by canonical name."""
    lines = (ROOT / path).read_text().splitlines()
    return {canonical(line.split("==")[0]) for line in lines if "==" in line}


def installed(name):
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def ensure(distributions, why):
    """Install the requirements files that pin whichever of distributions is
    missing (why: what needs them, for the message). Raises BenchmarkError if
    pip fails (no network, a venv this user cannot write)."""
    missing = {canonical(name) for name in distributions if not installed(name)}
    paths = [path for path in FILES if missing & pinned(path)]
    if not paths:
        return
    print(f"  installing {', '.join(paths)} ({why}), once", flush=True)
    completed = subprocess.run(
        ["bash", "scripts/venv.sh", *paths],  # one pip call for them all
        cwd=ROOT,
        env={**os.environ, "VENV_DIR": sys.prefix},
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-1:] or ["no output"]
        raise BenchmarkError(f"could not install {', '.join(paths)}: {tail[0]}")
    importlib.invalidate_caches()
