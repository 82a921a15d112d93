"""What a result was measured on: machine, versions, commit, date."""

import datetime
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

from bench.sut.servers import SERVERS
from infra import ROOT, production


def package_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def stack_versions(app, server=None):
    """{"flask": "3.1.3", ...} for the distributions app runs on: its serve.sh's,
    or its framework and driver with another server's."""
    names = production.read(app).packages
    if server in SERVERS:
        names = [names[0], *SERVERS[server].packages, names[-1]]
    return {name: package_version(name) or "not installed" for name in dict.fromkeys(names)}


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git(*args):
    """git's output, or None where there is no git or no repository (a container)."""
    try:
        completed = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


def capture(wrk_version):
    """The machine, the commit and the date, and wrk's version as given."""
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "python": platform.python_version(),
        "os": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "wrk": wrk_version,
    }
