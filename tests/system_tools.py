"""The system tools the tests run (scripts/system.sh's table), and what a test
does where it cannot run. ./test.sh installs every tool before the tests and
says so (SYSTEM_TOOLS=installed): there a missing tool is a bug, and the test
that needs it fails. In CI (.ci/run sets CI) whatever a test lacks fails it, a
tool or root. Run directly, pytest skips instead, with the reason."""

import os
import shutil

import pytest

# Where scripts/system.sh looks: PATH, then the system folders a user's PATH may lack.
SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin"])


def unavailable(reason):
    """Skip, or in CI fail: CI must run every test."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def system_tool(name):
    """The path of scripts/system.sh's tool `name`. Where it is missing the
    test fails under ./test.sh (which installed it) and in CI, and skips when
    pytest is run directly."""
    path = shutil.which(name, path=SEARCH)
    if path is None:
        reason = f"no {name}: `bash scripts/system.sh {name}` installs it (./test.sh does)"
        if os.environ.get("SYSTEM_TOOLS") == "installed":
            pytest.fail(reason)
        unavailable(reason)
    return path
