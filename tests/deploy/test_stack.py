"""tools/stack.py: compose.yaml as a Swarm stack file, checked without an
engine (tests/deploy/test_swarm.py deploys it)."""

import json

import pytest

from tests.deploy.test_compose import compose_config
from tools import stack
from tools.serve import APPS


@pytest.fixture(scope="module")
def services():
    completed = compose_config("--format", "json")
    assert completed.returncode == 0, completed.stderr
    return stack.stack(json.loads(completed.stdout))["services"]


def test_every_service_but_the_bench(services):
    assert set(services) == {"db", "pgbouncer", "proxy", "upstream", *APPS}


def test_only_what_format_3_takes(services):
    for name, service in services.items():
        assert not {"build", "depends_on", "profiles"} & set(service), name
        assert service["image"], name
        assert service["deploy"]["endpoint_mode"] == "dnsrr", name


@pytest.mark.parametrize("app", APPS)
def test_apps_are_replicated_behind_the_proxy(services, app):
    service = services[app]
    assert "ports" not in service
    deploy = service["deploy"]
    assert deploy["replicas"] >= 1 and deploy["update_config"]["order"] == "start-first"
    assert deploy["update_config"]["failure_action"] == "rollback"
    assert service["healthcheck"]["test"][0] == "CMD"
    # docker/drain.sh first, then the server's 5 s: within the grace period.
    assert service["command"] == ["sh", "docker/drain.sh", "sh", f"{app}_app/serve.sh"]
    drain = int(service["environment"]["DRAIN_SECONDS"])
    assert drain > 5  # proxy/compose-apps.conf's resolver valid=5s
    assert int(service["stop_grace_period"].removesuffix("s")) > drain + 5


def test_published_ports_are_host_mode(services):
    ports = services["proxy"]["ports"]
    assert [p["target"] for p in ports] == [8001, 8002, 8003, 8004]
    assert all(p["mode"] == "host" and isinstance(p["published"], int) for p in ports)


def test_the_stacks_proxy_needs_the_write_token(services):
    """The Swarm stack's proxy, as compose's: write-token.sh before nginx,
    with the write_token secret, and no WRITES_OPEN to open writes."""
    proxy = services["proxy"]
    assert proxy["entrypoint"][:2] == ["sh", "/etc/nginx/write-token.sh"]
    assert [secret["source"] for secret in proxy["secrets"]] == ["write_token"]
    assert "WRITES_OPEN" not in proxy.get("environment", {})


def test_each_service_keeps_its_networks():
    """compose.yaml's networks, each overlay and attachable: Postgres on
    `database` only, the proxy and the rating sources on neither of the
    database's networks."""
    completed = compose_config("--format", "json")
    whole = stack.stack(json.loads(completed.stdout))
    networks = {name: service["networks"] for name, service in whole["services"].items()}
    assert networks["db"] == ["database"]
    assert sorted(networks["pgbouncer"]) == ["database", "pool"]
    for name in ("proxy", "upstream"):
        assert networks[name] == ["default"], name
    for app in APPS:
        assert sorted(networks[app]) == ["default", "pool"], app
    overlay = {"driver": "overlay", "attachable": True}
    assert whole["networks"] == {name: overlay for name in ("database", "pool", "default")}
