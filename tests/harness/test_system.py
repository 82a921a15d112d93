"""The system tools, before anything else: scripts/system.sh, the real script,
run as an unprivileged user (nobody, where the tests run as root) whose PATH
lacks wrk, refuses in one line naming the command to run, before anything is
installed (apt-get is watched); with the tools there it does nothing.
./benchmark.sh and ./test.sh, from a copy of the project with no .venv,
refuse so before they make .venv or run pip (bench/preflight.py reads the
command line with the standard library alone). And .ci/run is the README's
test command. Nothing here installs or removes a package: this machine's
tools are shared."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bench import arguments, cli, modes, preflight
from bench.sut import lineup
from tests.system_tools import system_tool, unavailable
from tools import ROOT, serve

SYSTEM = ROOT / "scripts" / "system.sh"
NOBODY = 65534
# What the scripts run before they would install: the rest of a PATH is left out.
COMMANDS = ["bash", "sh", "awk", "dirname", "python3", "sha256sum", "cut", "cat"]


def table(path):
    """The tools in scripts/system.sh's table, as its --help lists them, run
    with PATH path: each followed by what needs it (./benchmark.sh ..., ./test.sh ...)."""
    usage = subprocess.run(
        ["bash", str(SYSTEM), "--help"], env={"PATH": str(path)}, capture_output=True, text=True
    )
    listed = usage.stdout.split("Tools:\n", 1)[1].splitlines()
    assert all(re.match(r"  \S+ +\./(benchmark|test)\.sh\b", line) for line in listed), listed
    return [line.split()[0] for line in listed]


@contextlib.contextmanager
def writable():
    """A temporary folder, removed afterwards, that nobody can write."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        if os.geteuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
        yield Path(folder)


@pytest.fixture
def scratch():
    with writable() as folder:
        yield folder


@pytest.fixture
def path(scratch):
    """A PATH of the few COMMANDS (no wrk, no sudo) and apt-get behind a
    watcher: apt-get.called exists once anything ran it."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for name in COMMANDS:
        # The system's own, which nobody can run too (not one in root's home).
        (bin_dir / name).symlink_to(shutil.which(name, path="/usr/local/bin:/usr/bin:/bin"))
    if shutil.which("mawk"):  # Debian's default awk, without gawk's extensions
        (bin_dir / "awk").unlink()
        (bin_dir / "awk").symlink_to(shutil.which("mawk"))
    apt_get = shutil.which("apt-get")
    if apt_get is None:
        pytest.skip("no apt-get: this checks scripts/system.sh on Debian or Ubuntu")
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\n: >"$0.called"\nexec {apt_get} "$@"\n')
    os.chmod(bin_dir / "apt-get", 0o755)
    for system_dir in ("/usr/local/sbin", "/usr/sbin", "/sbin"):  # system.sh's search
        assert shutil.which("wrk", path=system_dir) is None
    return bin_dir


def hiding(program):
    """argv that runs the argv after it as nobody in a mount namespace of its
    own, where program's path is /dev/null: not executable, so not found.
    Root only; the mount ends with the namespace."""
    mount, setpriv, sh = (shutil.which(name) for name in ("mount", "setpriv", "sh"))
    drop = f"{setpriv} --reuid={NOBODY} --regid={NOBODY} --clear-groups"
    script = f'{mount} --bind /dev/null "$0" && exec {drop} "$@"'
    unshare = [shutil.which("unshare"), "--mount", "--propagation", "private"]
    return [*unshare, sh, "-c", script, program]


def give_to_nobody(folder):
    if os.geteuid() == 0:
        for node in [folder, *folder.rglob("*")]:
            os.lchown(node, NOBODY, NOBODY)


def unprivileged(args, scratch, env_path, cwd=None, hide=None):
    """args run in cwd (default scratch) with PATH env_path, as nobody where
    the tests run as root (scratch is given to nobody first), else as this
    user; hide: a program's path, not found by this run alone (root only)."""
    kwargs = {}
    give_to_nobody(scratch)
    if os.geteuid() == 0:
        if hide:
            args = [*hiding(hide), *args]
        else:
            kwargs = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    elif hide:
        unavailable("hiding a program takes root (a mount namespace)")
    cwd = cwd or scratch
    env = {"PATH": env_path, "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, **kwargs
    )


def refused(completed, packages):
    """One line on stderr, naming the apt-get install of those packages."""
    lines = completed.stderr.splitlines()
    assert completed.returncode == 1 and len(lines) == 1, completed.stderr
    assert f"apt-get install -y {packages}" in lines[0], lines[0]


@pytest.mark.parametrize("tools", [["wrk"], ["wrk", "nginx"], ["--all"]])
def test_system_sh_refuses_in_one_line_before_installing(path, scratch, tools):
    completed = unprivileged(["bash", str(SYSTEM), *tools], scratch, str(path))
    refused(completed, "wrk")
    assert completed.stderr.startswith("missing wrk"), completed.stderr
    assert not (path / "apt-get.called").exists()


def test_system_sh_does_nothing_when_the_tools_are_there(path, scratch):
    system_tool("wrk")
    system_tool("nginx")
    env_path = f"{path}{os.pathsep}{os.environ['PATH']}"  # apt-get: the watcher's
    completed = unprivileged(["bash", str(SYSTEM), "wrk", "nginx"], scratch, env_path)
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "", "")
    assert not (path / "apt-get.called").exists()


def test_system_sh_knows_only_its_table(scratch):
    completed = unprivileged(["bash", str(SYSTEM), "wget"], scratch, os.environ["PATH"])
    assert completed.returncode == 2 and "no tool wget" in completed.stderr


def test_every_tool_named_is_in_system_sh_table(path):
    """What bench/preflight.py and the tests (system_tool) name is in the table."""
    named = set(preflight.tools_needed(["all", "--pgbouncer", "--pin=0:1:1", "--proxy=on"]))
    for test in (ROOT / "tests").rglob("*.py"):
        named.update(re.findall(r'system_tool\("(\w+)"\)', test.read_text()))
    assert named <= set(table(path)), named - set(table(path))
    assert {"wrk", "nginx", "pgbouncer", "taskset", "docker", "kubectl"} <= named


@pytest.mark.parametrize(
    "argv, tools",
    [
        (["quart"], ["wrk"]),
        (["all", "--tune"], ["wrk"]),
        (["quart", "--rate", "500,1000"], []),  # the open-loop generator is Python
        (["quart", "--rate", "auto"], ["wrk"]),  # auto measures wrk's peak first
        (["quart", "--proxy", "on"], ["wrk", "nginx"]),
        (["quart", "--proxy=both"], ["wrk", "nginx"]),
        (["quart", "--proxy", "off"], ["wrk"]),
        (["quart", "--replicas", "1,2"], ["wrk", "nginx"]),
        (["quart", "--replicas", "1"], ["wrk"]),
        (["quart", "--pgb"], ["wrk", "pgbouncer"]),  # an abbreviation, as argparse reads it
        (["quart", "--pin", "0:1:1"], ["wrk", "taskset"]),
        (["quart", "--target", "http://127.0.0.1:8000", "--proxy", "on"], ["wrk"]),
        (["quart", "-c", "20,64", "--replicas", "1,2,4", "--repeat", "2"], ["wrk", "nginx"]),
        (["quart", "--proxy"], []),  # malformed: the run's own parser refuses it, after
        (["--help"], []),
        (["quart", "--he"], []),  # --help, as argparse reads a prefix
        (["--serve", "quart"], []),
        (["--serve", "quart", "--port", "8000", "--proxy"], ["nginx"]),
    ],
)
def test_the_tools_a_benchmark_needs(argv, tools):
    assert preflight.tools_needed(argv) == tools


def the_runs_own(argv):
    """The tools the run declares (its modes', its lineup's), as bench/cli.py
    checks them; None for a command line the run refuses."""
    try:
        options, slots = cli.checked(argv)
    except SystemExit:
        return None
    return sorted(modes.tools(options) + lineup.tools_needed(slots, options.sut))


RUN_WORDS = [
    ["--rate", "500"],
    ["--rate", "auto"],
    ["--tune"],
    ["--slo", "100ms"],
    ["--overload", "2"],
    ["--proxy", "on"],
    ["--proxy", "limit"],
    ["--replicas", "1,2"],
    ["--pgbouncer"],
    ["--pin", "0:1:1"],
    ["--target", "http://127.0.0.1:8000"],
    ["--profile"],
]


@pytest.mark.parametrize(
    "words",
    [
        [],
        *([a] for a in RUN_WORDS),
        *([a, b] for i, a in enumerate(RUN_WORDS) for b in RUN_WORDS[i + 1 :]),
    ],
)
def test_preflight_says_what_the_run_declares(words):
    """bench/preflight.py restates, with the standard library alone, what the
    modes and the lineup declare they need: each option that needs a tool,
    and every pair of them, where the run takes it, reads the same both ways."""
    argv = ["quart", *(word for option in words for word in option)]
    declared = the_runs_own(argv)
    if declared is not None:
        assert sorted(preflight.tools_needed(argv)) == declared, argv


def test_every_proxy_choice_but_off_needs_nginx():
    """The run's own choices (bench/arguments.py), each read by preflight:
    a choice added there needs no change here (--proxy limit had none)."""
    [proxy] = [a for a in arguments.parser()._actions if "--proxy" in a.option_strings]
    for choice in proxy.choices:
        needed = preflight.tools_needed(["quart", "--proxy", choice])
        assert ("nginx" in needed) == (choice != "off"), choice


def test_the_scanners_read_real_options():
    """Each option bench/preflight.py reads is one of the command line it
    reads it for: a renamed option fails here rather than go unseen."""
    real = arguments.parser()._option_string_actions
    assert set(preflight.measuring()._option_string_actions) <= set(real)
    assert {"on", "both"} < set(real["--proxy"].choices)
    assert set(preflight.serving()._option_string_actions) == {"--proxy"}
    assert serve.arguments(["quart", "--proxy"]).proxy


def test_python_m_bench_refuses_the_same_installing_nothing(path, monkeypatch):
    """bench/cli.py's second line, for whoever runs python -m bench directly:
    system.sh --check's sentence, even as root."""
    monkeypatch.setenv("PATH", str(path))
    with pytest.raises(SystemExit) as refusal:
        cli.main(["quart", "--proxy", "on"])
    assert str(refusal.value).startswith("missing wrk: run ")
    assert "apt-get install -y wrk, then" in str(refusal.value)  # nginx is in /usr/sbin
    assert not (path / "apt-get.called").exists()


def test_preflight_needs_the_standard_library_alone():
    """python -S: no site-packages, so nothing of .venv's; as benchmark.sh
    runs it before .venv exists. A run of the open loop alone needs no tool."""
    completed = subprocess.run(
        [sys.executable, "-S", "-m", "bench.preflight", "quart", "--rate", "500"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "", "")


# What the extras' requirements files install (requirements-openloop.txt,
# requirements-servers.txt): bench/sut/extras.py installs them when a run
# first needs them, so the command line must start without any.
EXTRA_MODULES = ("hdrh", "gevent", "granian", "psycogreen", "tornado", "twisted", "waitress")
WITHOUT_EXTRAS = f"""
import importlib.abc, sys
class NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {EXTRA_MODULES!r}:
            raise ImportError(f"{{name}}: an extra, not installed on a fresh clone")
sys.meta_path.insert(0, NoExtras())
import bench.cli, bench.run, tools.serve
"""


def test_the_command_line_starts_without_the_extras():
    """./benchmark.sh quart on a fresh clone: requirements.txt and the charts'
    only; every extra is imported where a run has installed it."""
    completed = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS], cwd=ROOT, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr


@pytest.fixture(scope="module")
def clone():
    """A copy of the project's files as a fresh clone has them (no .venv),
    nobody's; each test checks that it made no .venv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    with writable() as folder:
        copy = folder / "project"
        for name in filter(None, listed):
            source = ROOT / name
            if source.is_file():
                (copy / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy / name)
        give_to_nobody(copy)
        yield copy


@pytest.mark.parametrize("command", [["./benchmark.sh", "quart"], ["./test.sh", "-m", "not slow"]])
def test_a_run_refuses_before_pip(scratch, clone, path, command):
    completed = unprivileged(command, scratch, str(path), cwd=clone)
    refused(completed, "wrk")
    assert not (clone / ".venv").exists()
    assert not (path / "apt-get.called").exists()


@pytest.mark.parametrize(
    "command, packages",
    [
        (["./benchmark.sh", "--serve", "quart", "--proxy"], "nginx-light"),
        (["./benchmark.sh", "quart", "--proxy", "on"], "wrk nginx-light"),
        (["./benchmark.sh", "quart", "--replicas", "1,2"], "wrk nginx-light"),
    ],
)
def test_a_run_that_needs_nginx_refuses_where_it_is_hidden(scratch, clone, path, command, packages):
    nginx = system_tool("nginx")
    completed = unprivileged(command, scratch, str(path), cwd=clone, hide=nginx)
    refused(completed, packages)
    assert not (clone / ".venv").exists()
    assert not (path / "apt-get.called").exists()


@pytest.mark.parametrize("argv", [["--help"], ["quart", "--rate", "500"], ["--serve", "quart"]])
def test_what_needs_no_tool_goes_on_without_one(scratch, clone, path, argv):
    completed = unprivileged(["python3", "-m", "bench.preflight", *argv], scratch, str(path), clone)
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "", "")
    assert not (path / "apt-get.called").exists()


def test_ci_runs_the_readme_test_command():
    """.ci/run adds only CI's setting to the README's test command, which
    installs everything itself."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert commands[0] == "./benchmark.sh quart"
    test_command = commands[1]
    code = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert code == [
        "set -Eeuo pipefail",
        'cd "$(dirname "$0")/.."',
        'export CI="${CI:-1}"',
        f"exec {test_command}",
    ]
