"""`docker stack deploy`, for real, on a single-node swarm made here.

Where Docker can run (as tests/deploy/test_compose_up.py: dockerd started if none
runs, the stand-in base images built or reused), the module makes this
daemon a swarm manager (`docker swarm init --advertise-addr 127.0.0.1`;
refused if it already is one: a swarm it did not make is not its to leave),
builds compose.yaml's images, writes the stack file (compose.yaml through
`docker compose config` and tools/stack.py, with Quart at QUART_REPLICAS and
the published ports moved to free ports), and deploys it. Then: every service
runs all its tasks; from the host, only the proxy's ports answer; the
contract suite passes through the proxy's port of each app (the door: its
write token sent); the proxy reaches every Quart task; ./benchmark.sh
measures the replicated Quart through the door, in the open loop under its
limits and with its token, and its ledger balances; and `docker service
update --force` replaces Quart's tasks one by one while writers post reviews
through the door: every request answered 201, every 201 a row. At the end
`docker stack rm`, the volume and images it made removed, the swarm left, the
daemon (if started here) stopped and the host's network given back.
Elsewhere it skips with its reason; in CI (CI set) it fails.

The routing mesh is not used: on the machine this was written on, a port
published the default (ingress) way never answered, and neither did a
service's virtual IP; tools/stack.py publishes in host mode and resolves
names to tasks (dnsrr). Host-mode ports listen on every interface of the
machine (Swarm has no host_ip), for the minutes the test runs.
"""

import json
import os
import subprocess
import sys
import threading
import time

import psycopg2
import pytest
import requests
import yaml

from tests.docker_host import (
    TEST_SUPERUSER,
    add_test_superuser,
    answered_by,
    build_standins,
    compose_plugin,
    docker_daemon,
    exclusive,
    images,
    loopback_override,
    post_until,
    remove_new_images,
    run,
    unavailable,
)
from tests.helpers import query
from tests.system_tools import system_tool
from tools import ROOT
from tools import secrets as stack_secrets
from tools import stack as swarm
from tools.serve import APPS

pytestmark = [pytest.mark.slow, pytest.mark.docker]  # a whole stack in Docker

PROJECT = f"swarm{os.getpid()}"
QUART_REPLICAS = 2
WRITERS = 4
# Each writer's pause between writes through the door: 4 writers at 4/s each,
# under its 20 writes/s per client address (proxy/door.conf).
WRITE_PAUSE = 0.25
# The bench's open-loop rate through the door, per route: under its limits
# for one client address (20 writes/s, 200 reads/s).
BENCH_RATE = 15


def swarm_state(env):
    template = "{{.Swarm.LocalNodeState}}"
    return run(["docker", "info", "--format", template], env).stdout.strip()


def converged(env):
    """{service: (running, desired)} of the stack's services."""
    listing = run(
        ["docker", "stack", "services", PROJECT, "--format", "{{.Name}} {{.Replicas}}"], env
    ).stdout.split("\n")
    services = {}
    for line in filter(None, listing):
        name, replicas = line.split()[:2]
        running, desired = replicas.split("/")
        services[name.removeprefix(f"{PROJECT}_")] = (int(running), int(desired))
    return services


class Stack:
    def __init__(self, env, config, secrets_dir):
        self.env, self.config, self.secrets_dir = env, config, secrets_dir
        self.superuser_password = None  # the tests' own superuser's (add_test_superuser)

    def published(self, service, target):
        [port] = [p for p in self.config[service]["ports"] if p["target"] == target]
        return port["published"]

    def url(self, app):
        """The proxy's port for app (proxy/compose.conf: 8001 is flask, ...)."""
        return f"http://127.0.0.1:{self.published('proxy', 8001 + APPS.index(app))}"

    @property
    def write_token(self):
        return self.secrets_dir / "write_token"

    def database_url(self, user=TEST_SUPERUSER, secret=None):
        """The stack's database as user, with the password of the stack's
        secret (the tests' own superuser by default)."""
        db = self.config["db"]["environment"]
        password = self.superuser_password
        if secret:
            password = stack_secrets.read(secret, self.secrets_dir)
        port = self.published("db", 5432)
        return f"postgresql://{user}:{password}@127.0.0.1:{port}/{db['POSTGRES_DB']}"


def wait_ready(env, stack, timeout=420):
    """Every service at its replicas, and every app answering through the proxy."""
    deadline = time.monotonic() + timeout
    while True:
        services = converged(env)
        ready = services and all(r == d for r, d in services.values())
        if ready:
            try:
                if all(requests.get(f"{stack.url(a)}/health", timeout=5).ok for a in APPS):
                    return
            except requests.RequestException:
                pass
        if time.monotonic() > deadline:
            logs = run(["docker", "service", "ps", "--no-trunc", PROJECT], env, check=False)
            pytest.fail(f"the stack did not come up: {services}\n{logs.stdout[-4000:]}")
        time.sleep(2)


def leftovers(env):
    label = f"label=com.docker.stack.namespace={PROJECT}"
    kinds = {
        "container": ["docker", "ps", "--all", "--quiet", "--filter", label],
        "volume": ["docker", "volume", "ls", "--quiet", "--filter", f"name={PROJECT}_"],
        "network": ["docker", "network", "ls", "--quiet", "--filter", label],
        "image": ["docker", "image", "ls", "--quiet", "--filter", f"reference={PROJECT}-*"],
    }
    return {kind: run(args, env).stdout.split() for kind, args in kinds.items()}


def remove_stack(env):
    run(["docker", "stack", "rm", PROJECT], env, check=False)
    deadline = time.monotonic() + 120  # stack rm returns before the tasks stop
    while any(leftovers(env)[kind] for kind in ("container", "network")):
        assert time.monotonic() < deadline, leftovers(env)
        time.sleep(1)
    for volume in leftovers(env)["volume"]:
        run(["docker", "volume", "rm", volume], env)


@pytest.fixture(scope="module")
def stack(tmp_path_factory, build_cache):
    system_tool("docker")
    tmp = tmp_path_factory.mktemp("swarm")
    env = {**os.environ, "DOCKER_CONFIG": compose_plugin(tmp / "docker-config")}
    env["COMPOSE_PARALLEL_LIMIT"] = "1"  # one build of the app image, then the cache
    for name in ("COMPOSE_FILE", "COMPOSE_PROFILES", "COMPOSE_PROJECT_NAME"):
        env.pop(name, None)
    # Secrets of the test's own (tools/secrets.py), Swarm secrets in the stack.
    env["SECRETS_DIR"] = str(tmp / "secrets")
    stack_secrets.generate(tmp / "secrets")
    started = time.monotonic()
    with exclusive("compose-up-e2e.lock"), docker_daemon(env, tmp):
        if swarm_state(env) != "inactive":
            unavailable(f"this daemon is already in a swarm ({swarm_state(env)}): not ours")
        build_standins(env)
        before = images(env)
        compose = ["docker", "compose", "-p", PROJECT, "-f", str(ROOT / "compose.yaml")]
        services = json.loads(run([*compose, "config", "--format", "json"], env).stdout)
        loopback_override(services["services"], tmp / "loopback.yaml")
        replicas = tmp / "replicas.yaml"
        replicas.write_text(f"services:\n  quart:\n    deploy:\n      replicas: {QUART_REPLICAS}\n")
        compose += ["-f", str(tmp / "loopback.yaml"), "-f", str(replicas)]
        run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], env)
        try:
            run([*compose, "build"], env, timeout=900)
            config = run([*compose, "config", "--format", "json"], env).stdout
            stack_file = tmp / "stack.yaml"
            stack_file.write_text(yaml.safe_dump(swarm.stack(json.loads(config)), sort_keys=False))
            run(["docker", "stack", "deploy", "-c", str(stack_file), PROJECT], env)
            services = yaml.safe_load(stack_file.read_text())["services"]
            stack = Stack(env, services, tmp / "secrets")
            wait_ready(env, stack)
            label = f"label=com.docker.swarm.service.name={PROJECT}_db"
            [db] = run(["docker", "ps", "--quiet", "--filter", label], env).stdout.split()
            stack.superuser_password = add_test_superuser(env, db)
            print(f"\nswarm stack up in {time.monotonic() - started:.0f} s")
            yield stack
        finally:
            remove_stack(env)
            run(["docker", "swarm", "leave", "--force"], env, check=False)
            # The bridge `swarm init` made for the tasks' outside traffic; leaving
            # the swarm keeps it (no swarm ran before: checked above).
            run(["docker", "network", "rm", "docker_gwbridge"], env, check=False)
            build_cache(env, PROJECT)
            remove_new_images(env, before, leftovers(env)["image"])
            assert leftovers(env) == {"container": [], "volume": [], "network": [], "image": []}
            assert swarm_state(env) == "inactive"


def test_every_service_runs_all_its_tasks(stack):
    services = converged(stack.env)
    assert set(services) == set(stack.config)
    assert services["quart"] == (QUART_REPLICAS, QUART_REPLICAS)
    assert all(running == desired > 0 for running, desired in services.values()), services


def test_contract_suite_passes_through_the_proxy(stack):
    """tests/contract/test_contract.py against the proxy's port of each app."""
    env = {
        **os.environ,
        "TEST_DATABASE_URL": stack.database_url(),  # the stack's, given over to the suite
        "TEST_SERVERS": " ".join(f"{app}={stack.url(app)}" for app in APPS),
        "TEST_WRITE_TOKEN_FILE": str(stack.write_token),  # the door's
    }
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "tests/contract/test_contract.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-5000:]
    assert " passed" in completed.stdout and "skipped" not in completed.stdout


def test_the_proxy_reaches_every_quart_task(stack):
    """Its access log names every task as one that answered (the answers
    name none)."""
    agent = {"User-Agent": f"swarm-test-{os.getpid()}"}
    seen, deadline = set(), time.monotonic() + 30
    while len(seen) < QUART_REPLICAS and time.monotonic() < deadline:
        for _ in range(10):
            response = requests.get(f"{stack.url('quart')}/films/995/", headers=agent, timeout=10)
            assert response.status_code == 200, response.text
            assert "X-Upstream-Addr" not in response.headers
        logs = run(["docker", "service", "logs", "--raw", f"{PROJECT}_proxy"], stack.env)
        seen = answered_by(logs.stdout, agent["User-Agent"])
        time.sleep(0.5)
    assert len(seen) == QUART_REPLICAS, seen


def test_bench_measures_the_replicated_service_through_the_door(stack, tmp_path):
    """./benchmark.sh quart --target (the door, both tasks) --database-url
    --write-token-file: the open loop at a rate under the door's limits for
    one client address (a closed loop is over them at once), every write with
    the stack's token; every request 2xx, pgbench's ceiling and the ledger
    against the stack's Postgres, as the bench's own role (films_bench)."""
    results = tmp_path / "results"
    completed = subprocess.run(
        [
            "./benchmark.sh",
            "quart",
            "--target",
            stack.url("quart"),
            "--database-url",
            stack.database_url("films_bench", "bench_password"),
            "--write-token-file",
            str(stack.write_token),
            "--rate",
            str(BENCH_RATE),
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--results",
            str(results),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [report] = results.glob("*/*.json")
    rates = json.loads(report.read_text())["openloop"]
    assert {rate["route"] for rate in rates} == {"film", "films", "review"}
    for rate in rates:
        sent, statuses = rate["report"]["sent"], rate["report"]["statuses"]
        assert sent > 0 and rate["report"]["ok"] == sent and set(statuses) <= {"200", "201"}, rate
    [review] = [rate for rate in rates if rate["route"] == "review"]
    assert review["report"]["ledger"]["ok"], review["report"]["ledger"]


def test_only_the_proxys_ports_answer_from_the_host(stack):
    """What the host reaches of the stack: the services Swarm publishes ports
    for are the proxy (and db, which this test publishes for its own checks),
    and each of the proxy's ports answers; the apps, PgBouncer and the
    upstream service publish none."""
    published = {}
    for service in converged(stack.env):
        inspect = ["docker", "service", "inspect", "--format", "{{json .Spec.EndpointSpec.Ports}}"]
        ports = json.loads(run([*inspect, f"{PROJECT}_{service}"], stack.env).stdout) or []
        if ports:
            published[service] = {port["PublishedPort"] for port in ports}
    assert set(published) == {"proxy", "db"}, published
    assert published["proxy"] == {stack.published("proxy", 8001 + i) for i in range(len(APPS))}
    # And what the host binds for the tasks' containers: theirs only.
    template = (
        '{{index .Config.Labels "com.docker.swarm.service.name"}} {{json .HostConfig.PortBindings}}'
    )
    label = f"label=com.docker.stack.namespace={PROJECT}"
    ids = run(["docker", "ps", "--quiet", "--filter", label], stack.env).stdout.split()
    for line in run(
        ["docker", "inspect", "--format", template, *ids], stack.env
    ).stdout.splitlines():
        service, bindings = line.split(" ", 1)
        if any(json.loads(bindings) or {}):
            assert service.removeprefix(f"{PROJECT}_") in published, line
    for app in APPS:
        assert requests.get(f"{stack.url(app)}/health", timeout=10).status_code == 200


def test_rolling_update_under_writes_loses_no_answer(stack):
    """`docker service update --force`: each Quart task replaced by a new one
    (start-first, compose.yaml's update_config) while writers post through
    the door, each with the stack's write token and under its write rate.
    Every request answered 201, every 201 a row."""
    film_id = 993
    connection = psycopg2.connect(stack.database_url())
    connection.autocommit = True
    try:
        query(connection, "DELETE FROM review WHERE film_id = %s RETURNING 1", film_id)
        stop_event, outcomes = threading.Event(), []
        token = {"Authorization": f"Bearer {stack_secrets.read('write_token', stack.secrets_dir)}"}
        writers = [
            threading.Thread(
                target=post_until,
                args=(stack.url("quart"), film_id, stop_event, outcomes, token, WRITE_PAUSE),
            )
            for _ in range(WRITERS)
        ]
        for writer in writers:
            writer.start()
        time.sleep(1)
        started = time.monotonic()
        # compose.yaml's update_config as it is, but for the 30 s it watches
        # the last task before it calls the update done: 2 s here.
        update = ["docker", "service", "update", "--force", "--detach=false"]
        update += ["--update-monitor", "2s", f"{PROJECT}_quart"]
        run(update, stack.env, timeout=400)
        took = time.monotonic() - started
        time.sleep(1)
        stop_event.set()
        for writer in writers:
            writer.join(timeout=15)
        [[rows]] = query(connection, "SELECT count(*) FROM review WHERE film_id = %s", film_id)
    finally:
        connection.close()
    print(f"\nrolling update of {QUART_REPLICAS} tasks: {took:.0f} s, {len(outcomes)} writes")
    others = [o for o in outcomes if o != 201]
    if others:
        logs = [
            run(
                ["docker", "service", "logs", "--no-trunc", "--tail", "40", f"{PROJECT}_{name}"],
                stack.env,
                check=False,
            )
            for name in ("proxy", "quart")
        ]
        print("\n".join(log.stdout[-6000:] + log.stderr[-6000:] for log in logs))
    assert outcomes and not others, (len(others), len(outcomes), others[:20])
    assert rows == outcomes.count(201)
    # The last old task may still be stopping as the update returns.
    deadline = time.monotonic() + 60
    while converged(stack.env)["quart"] != (QUART_REPLICAS, QUART_REPLICAS):
        assert time.monotonic() < deadline, converged(stack.env)
        time.sleep(1)
