"""The Docker tests' own helpers (tests/docker_host.py), checked without Docker."""

import random

import yaml

from tests.deploy import test_compose_up

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
