"""What both examples print: their figures as JSON, with the command that made
them, the commit and the Python version."""

import json
import platform
import sys

from bench.sut.environment import git


def print_report(command, **figures):
    report = {
        "command": command,
        "git_commit": git("rev-parse", "--short", "HEAD"),
        "python": platform.python_version(),
        **figures,
    }
    json.dump(report, sys.stdout, indent=2)
    print()
