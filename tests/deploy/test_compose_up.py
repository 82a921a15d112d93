"""`docker compose up`, for real: the stack built, started, probed, measured, stopped.

Where Docker can run (root, Debian's docker.io: ./test.sh installs it), the
module starts dockerd if none is running, builds the stand-in base images
(docker/standins/build.sh: cached between runs), generates the stack's
secrets (tools/secrets.py) into a folder of its own, then `docker compose up
-d --wait` with every published port moved to a free port of 127.0.0.1 (and
db's published there too, for the contract suite's database checks). Then,
for every service: running, healthy if it has a healthcheck; for every
published port (the proxy's, the only ones: the door, its write token
sent): the contract suite (tests/contract/test_contract.py); the bench
service's run and its JSON; `docker compose stop` of each app under writes;
least privilege from outside: no postgres/postgres, the apps' role and
credentials refused what is not theirs, no secrets, no stack; the door's
token, limits and JSON access log. At the end `docker compose down -v`
and the removal of what the test built: no container, volume, network or app
image is left, nor a daemon it started (nor that daemon's host networking).
Elsewhere the module skips with its reason, or in CI (CI set) fails.
"""

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

import psycopg2
import pytest
import requests

from db import embedded, roles
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
)
from tests.harness.test_pgbouncer import REFUSED_AT_THE_CONSOLE
from tests.helpers import add_rows_of_yours, assert_unchanged, clean_bench_report, query, snapshot
from tests.system_tools import system_tool
from tools import ROOT
from tools import secrets as stack_secrets
from tools.serve import APPS

pytestmark = [pytest.mark.slow, pytest.mark.docker]  # the whole stack in Docker


PROJECT = f"e2e{os.getpid()}"
STOP_GRACE = 10  # seconds: docker compose stop's default, before SIGKILL
WRITERS = 4  # threads posting reviews while an app is stopped
LOAD_SECONDS = 3  # wrk's run at each replica count


class Stack:
    """The compose project: `compose(...)` runs `docker compose` on it."""

    def __init__(self, env, files, secrets_dir=None):
        self.env = env
        self.files = files
        self.secrets_dir = secrets_dir
        self.superuser_password = None  # the tests' own superuser's (add_test_superuser)

    def compose(self, *args, timeout=120, check=True, profiles=()):
        """docker compose ARGS; with profiles=["bench"] the bench service is
        part of the project (never for `up`: it would start measuring)."""
        files = [arg for file in self.files for arg in ("-f", str(file))]
        options = [arg for profile in profiles for arg in ("--profile", profile)]
        command = ["docker", "compose", "-p", PROJECT, *files, *options, *args]
        return run(command, self.env, timeout=timeout, check=check)

    def config(self):
        completed = self.compose("config", "--format", "json", profiles=["bench"])
        return json.loads(completed.stdout)["services"]

    def published(self, service, target):
        address = self.compose("port", service, str(target)).stdout.strip()
        return address.rsplit(":", 1)[1]

    def containers(self):
        output = self.compose("ps", "--all", "--format", "json").stdout
        # One JSON object per line (Compose 2.21+), or one JSON list.
        text = output.strip()
        if text.startswith("["):
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line]

    def address(self, service):
        """The service's container address on the project's network."""
        [address] = self.addresses(service)
        return address

    def addresses(self, service):
        """The addresses of the service's containers (its replicas)."""
        template = "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}"
        return [
            run(["docker", "inspect", "--format", template, c["ID"]], self.env).stdout.split()[0]
            for c in self.containers()
            if c["Service"] == service
        ]

    def secret(self, name):
        return stack_secrets.read(name, self.secrets_dir)

    def container(self, service):
        [container] = [c["ID"] for c in self.containers() if c["Service"] == service]
        return container

    def database_url(self, user=TEST_SUPERUSER, secret=None, host=None, port=None):
        """The stack's database as user with the password of the stack's
        secret (the tests' own superuser by default), from the host: db's
        port published on 127.0.0.1 by the test, or host:port."""
        db = self.config()["db"]["environment"]
        password = self.secret(secret) if secret else self.superuser_password
        where = f"{host}:{port}" if host else f"127.0.0.1:{self.published('db', 5432)}"
        return f"postgresql://{user}:{password}@{where}/{db['POSTGRES_DB']}"


def project_leftovers(env):
    """What Docker still holds with this project's label."""
    label = f"label=com.docker.compose.project={PROJECT}"
    kinds = {
        "container": ["docker", "ps", "--all", "--quiet", "--filter", label],
        "volume": ["docker", "volume", "ls", "--quiet", "--filter", label],
        "network": ["docker", "network", "ls", "--quiet", "--filter", label],
        "image": ["docker", "image", "ls", "--quiet", "--filter", f"reference={PROJECT}-*"],
    }
    return {kind: run(args, env).stdout.split() for kind, args in kinds.items()}


@pytest.fixture(scope="module")
def stack(tmp_path_factory, build_cache):
    system_tool("docker")
    tmp = tmp_path_factory.mktemp("compose-up")
    env = {**os.environ, "DOCKER_CONFIG": compose_plugin(tmp / "docker-config")}
    # Sequential builds: the four app services build the same Dockerfile, and
    # the classic builder's cache serves the second to fourth only in turn.
    env["COMPOSE_PARALLEL_LIMIT"] = "1"
    for name in ("COMPOSE_FILE", "COMPOSE_PROFILES", "COMPOSE_PROJECT_NAME"):
        env.pop(name, None)
    # Secrets of the test's own, generated as a user would (tools/secrets.py).
    env["SECRETS_DIR"] = str(tmp / "secrets")
    stack_secrets.generate(tmp / "secrets")
    with exclusive("compose-up-e2e.lock"), docker_daemon(env, tmp):
        build_standins(env)
        before = images(env)
        stack = Stack(env, [ROOT / "compose.yaml"], tmp / "secrets")
        loopback_override(stack.config(), tmp / "loopback.yaml")
        stack.files.append(tmp / "loopback.yaml")
        try:
            up = stack.compose("up", "--detach", "--wait", timeout=900, check=False)
            if up.returncode != 0:
                logs = stack.compose("logs", "--no-color", "--tail", "40", check=False).stdout
                pytest.fail(f"docker compose up failed:\n{up.stderr[-3000:]}\n{logs[-5000:]}")
            stack.superuser_password = add_test_superuser(env, stack.container("db"))
            yield stack
        finally:
            build_cache(env, PROJECT)  # the Swarm module builds the same images
            stack.compose(
                "down",
                "--volumes",
                "--rmi",
                "local",
                "--remove-orphans",
                timeout=300,
                profiles=["bench"],
            )
            # What `down --rmi local` leaves: intermediate images of the
            # multi-stage builds (untagged) and any image the file names.
            remove_new_images(env, before, project_leftovers(env)["image"])
            assert project_leftovers(env) == {
                "container": [],
                "volume": [],
                "network": [],
                "image": [],
            }


def published_targets(stack):
    """{name: url} for every published port but db's: each app, and whatever
    forwards to one (a proxy), gets the contract suite."""
    targets = {}
    for name, service in stack.config().items():
        for port in service.get("ports", []):
            if name != "db":
                url = f"http://127.0.0.1:{stack.published(name, port['target'])}"
                targets[f"{name}-{port['target']}"] = url
    return targets


def test_every_service_is_up_and_healthy(stack):
    services = stack.config()
    states = {container["Service"]: container for container in stack.containers()}
    for name, service in services.items():
        if "bench" in service.get("profiles", []):
            continue
        assert states[name]["State"] == "running", states[name]
        if "healthcheck" in service:
            assert states[name]["Health"] == "healthy", states[name]


# Which service reaches which: Postgres only from PgBouncer (and the bench,
# not started by up), PgBouncer only from the apps.
REACHES = {
    "upstream": {"db:5432": False, "pgbouncer:6432": False, "quart:8000": True},
    "falcon": {"db:5432": False, "pgbouncer:6432": True, "upstream:9001": True},
    "quart": {"db:5432": False, "pgbouncer:6432": True, "upstream:9001": True},
    "flask": {"db:5432": False, "pgbouncer:6432": True},
}
PROBE = """import socket, sys
for address in sys.argv[1:]:
    host, port = address.split(":")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        print(address, True)
    except OSError:
        print(address, False)
"""


@pytest.mark.parametrize("service", REACHES)
def test_each_service_reaches_only_what_its_networks_hold(stack, service):
    probe = ["python", "-c", PROBE, *REACHES[service]]
    output = run(["docker", "exec", stack.container(service), *probe], stack.env).stdout
    reached = {address: flag == "True" for address, flag in map(str.split, output.splitlines())}
    assert reached == REACHES[service]


def test_the_proxy_cannot_name_the_database(stack):
    """The proxy's image has no Python: its resolver knows its network's
    services (the rating sources'), not Postgres nor PgBouncer."""
    proxy = stack.container("proxy")
    for host, known in (("db", False), ("pgbouncer", False), ("upstream", True)):
        found = run(["docker", "exec", proxy, "getent", "hosts", host], stack.env, check=False)
        assert (found.returncode == 0) == known, (host, found)


def test_contract_suite_passes_on_every_published_port(stack):
    """tests/contract/test_contract.py, the suite every app passes outside Docker,
    against each published port, with the stack's database."""
    targets = published_targets(stack)
    assert targets
    env = {
        **os.environ,
        "TEST_DATABASE_URL": stack.database_url(),  # the stack's, given over to the suite
        "TEST_SERVERS": " ".join(f"{name}={url}" for name, url in targets.items()),
        "TEST_WRITE_TOKEN_FILE": str(stack.secrets_dir / "write_token"),  # the door's
    }
    pytest_args = ["-q", "-x", "-p", "no:cacheprovider", "tests/contract/test_contract.py"]
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-5000:]
    assert " passed" in completed.stdout and "skipped" not in completed.stdout


def test_every_app_serves_its_ratings_through_the_proxy(stack):
    """GET /films/995/ratings/ through nginx, on every app: each of the
    upstream service's sources rated the film (compose.yaml's UPSTREAM_FANOUT)."""
    proxied = {
        name: url for name, url in published_targets(stack).items() if name.startswith("proxy-")
    }
    assert len(proxied) == len(APPS)
    for name, url in proxied.items():
        response = requests.get(f"{url}/films/995/ratings/", timeout=10)
        assert response.status_code == 200, (name, response.text)
        ratings = response.json()
        assert ratings["film_id"] == 995 and ratings["unavailable"] == [], name
        assert len(ratings["ratings"]) == 3 and None not in ratings["ratings"].values(), name


def test_the_door_takes_writes_with_the_token_only_limits_and_logs(stack):
    """compose's proxy is the door (proxy/door.conf), from outside: a write
    without the stack's token is the JSON 401 and no row, with it a 201 and
    its row; past the write burst, the JSON 429 with Retry-After; each
    request a JSON line of the proxy's log, with its id, status, duration and
    the app that answered."""
    url = published_targets(stack)["proxy-8002"]
    review = {"film_id": 994, "rating": 2}
    connection = psycopg2.connect(stack.database_url())
    connection.autocommit = True
    try:
        query(connection, "DELETE FROM review WHERE film_id = 994 RETURNING 1")
        refused = requests.post(f"{url}/reviews/", json=review, timeout=10)
        assert (refused.status_code, refused.json()) == (401, {"error": "authorization required"})
        assert query(connection, "SELECT count(*) FROM review WHERE film_id = 994") == [(0,)]
        token = {"Authorization": f"Bearer {stack.secret('write_token')}"}
        stored = requests.post(f"{url}/reviews/", json=review, headers=token, timeout=10)
        assert stored.status_code == 201, stored.text
        assert query(connection, "SELECT count(*) FROM review WHERE film_id = 994") == [(1,)]
    finally:
        connection.close()
    bad = {"film_id": 0, "rating": 2}  # refused by the app (422): nothing stored
    with requests.Session() as session:
        burst = [session.post(f"{url}/reviews/", json=bad, headers=token) for _ in range(80)]
    over = [answer for answer in burst if answer.status_code == 429]
    assert over and {answer.status_code for answer in burst} <= {422, 429}
    assert over[0].json() == {"error": "too many requests"} and over[0].headers["Retry-After"]
    logs = stack.compose("logs", "--no-color", "--no-log-prefix", "proxy").stdout
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    assert {401, 201, 429} <= {line["status"] for line in lines}
    line = next(line for line in reversed(lines) if line["status"] == 201)
    assert line["request"] == "POST /reviews/ HTTP/1.1" and line["upstream"].endswith(":8000")
    assert len(line["request_id"]) == 32 and isinstance(line["duration"], float)
    time.sleep(3)  # the write rate's bucket refilled, for whatever runs next


def test_bench_service_measures_and_loses_nothing(stack, tmp_path):
    """`docker compose run --rm bench quart --duration 2s`; its results/ is
    mounted here to read the JSON report."""
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # the bench runs as the image's user, not root
    add_rows_of_yours(stack.database_url())  # the bench leaves them as they are
    before = snapshot(stack.database_url())
    completed = stack.compose(
        "run",
        "--rm",
        "--volume",
        f"{results}:/app/results",
        "bench",
        "quart",
        "--duration",
        "2s",
        "--warmup",
        "1s",
        timeout=300,
        check=False,
        profiles=["bench"],
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert_unchanged(before, snapshot(stack.database_url()))
    measurements = clean_bench_report(results)["measurements"]
    assert {m["route"] for m in measurements} == {"film", "films", "review"}


@contextlib.contextmanager
def scaled(stack, app, tmp_path):
    """scale(n): app's replicas, each healthy. Published ports do not scale
    (one host port each): a scaled app is reached through the proxy. At the
    end, one replica again, published as before."""
    unpublished = tmp_path / f"unpublished-{app}.yaml"
    unpublished.write_text(f"services:\n  {app}:\n    ports: !reset []\n")
    scaled = Stack(stack.env, [*stack.files, unpublished], stack.secrets_dir)
    up = ["up", "--detach", "--wait", "--no-deps", "--scale"]

    def scale(replicas):
        scaled.compose(*up, f"{app}={replicas}", app, timeout=300)
        addresses = scaled.addresses(app)
        assert len(addresses) == replicas
        return addresses

    try:
        yield scale
    finally:
        stack.compose(*up, f"{app}=1", app, timeout=300)
    assert len(stack.addresses(app)) == 1


def test_proxy_balances_over_every_replica(stack, tmp_path):
    """`--scale flask=2`: the proxy's flask port answers from both replicas
    (its access log names the one that answered), once nginx has asked
    Docker's DNS again (compose-apps.conf: every 5 s)."""
    url = published_targets(stack)["proxy-8001"]
    agent = {"User-Agent": f"balance-test-{os.getpid()}"}
    with scaled(stack, "flask", tmp_path) as scale:
        replicas = set(scale(2))
        seen, deadline = set(), time.monotonic() + 30
        while seen != replicas and time.monotonic() < deadline:
            for _ in range(10):
                response = requests.get(f"{url}/films/995/", headers=agent, timeout=10)
                assert response.status_code == 200, response.text
                assert "X-Upstream-Addr" not in response.headers
            logs = stack.compose("logs", "--no-color", "--no-log-prefix", "proxy").stdout
            seen = answered_by(logs, agent["User-Agent"])
            time.sleep(0.5)
    assert seen == replicas


def pgbouncer_clients(stack):
    """Client connections PgBouncer holds (its stats console, SHOW CLIENTS)."""
    password = stack.secret("pgbouncer_stats_password")
    url = f"postgresql://pgbouncer_stats:{password}@{stack.address('pgbouncer')}:6432/pgbouncer"
    psql = [embedded.bin_path("psql"), "--no-psqlrc", "-At", url, "-c", "SHOW CLIENTS"]
    return len(run(psql, stack.env).stdout.splitlines())


def postgres_backends(connection):
    """Connections at Postgres from anything but this test (pg_stat_activity)."""
    [[count]] = query(
        connection,
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    )
    return count


def test_postgres_connections_stay_flat_as_replicas_grow(stack, tmp_path):
    """Quart at 1, 2 and 4 replicas, loaded through the proxy (wrk, 64
    connections, LOAD_SECONDS): the clients at PgBouncer grow with the
    replicas, the connections at Postgres stay within PgBouncer's pool (and
    its lookups' one). Prints the table docs/results/2026-11-23-pgbouncer-connections.md
    holds; its req/s count the door's 429s too, past 200 reads/s from wrk's
    one address (the apps then get that much)."""
    system_tool("wrk")
    bouncer = stack.config()["pgbouncer"]["environment"]
    server_pool = int(bouncer["DEFAULT_POOL_SIZE"]) + int(bouncer["RESERVE_POOL_SIZE"])
    url = published_targets(stack)["proxy-8002"]
    connection = psycopg2.connect(stack.database_url())
    connection.autocommit = True
    rows = []
    try:
        with scaled(stack, "quart", tmp_path) as scale:
            for replicas in (1, 2, 4):
                scale(replicas)
                wrk = ["wrk", "-t2", "-c64", f"-d{LOAD_SECONDS}s", f"{url}/films/"]
                load = subprocess.Popen(wrk, stdout=subprocess.PIPE, text=True)
                clients, backends = [], []
                while load.poll() is None:
                    clients.append(pgbouncer_clients(stack))
                    backends.append(postgres_backends(connection))
                    time.sleep(0.5)
                output = load.communicate()[0]
                requests_per_second = output.split("Requests/sec:")[1].split()[0]
                rows.append((replicas, max(clients), max(backends), requests_per_second))
    finally:
        connection.close()
    table = [
        "| quart replicas | client connections at PgBouncer (max) |"
        " connections at Postgres (max) | req/s through the proxy |",
        "|---|---|---|---|",
        *(f"| {r} | {c} | {b} | {q} |" for r, c, b, q in rows),
    ]
    print("\n" + "\n".join(table))
    assert all(backends <= server_pool + 2 for _, _, backends, _ in rows), table
    assert rows[-1][1] > rows[0][1], table  # the clients did grow


@pytest.mark.parametrize("app", APPS)
def test_stop_under_writes_loses_nothing_and_exits_in_time(stack, app):
    """`docker compose stop APP` while it takes writes: the server gets the
    signal (PID 1), finishes what is in flight, and exits 0 within the grace
    period; every 201 is a row, and no refused write is one (a write whose
    answer the stop lost may be: at most one per writer)."""
    # The container's own address on the compose network, not the published
    # port: Docker's userland proxy would be part of the test.
    url = f"http://{stack.address(app)}:8000"
    film_id = 991 + APPS.index(app)
    connection = psycopg2.connect(stack.database_url())
    connection.autocommit = True
    try:
        stop_event, outcomes = threading.Event(), []
        writers = [
            threading.Thread(target=post_until, args=(url, film_id, stop_event, outcomes))
            for _ in range(WRITERS)
        ]
        for writer in writers:
            writer.start()
        time.sleep(1)
        started = time.monotonic()
        stack.compose("stop", app, timeout=STOP_GRACE + 30)
        took = time.monotonic() - started
        stop_event.set()
        for writer in writers:
            writer.join(timeout=15)
        [container] = [c for c in stack.containers() if c["Service"] == app]
        [[rows]] = query(connection, "SELECT count(*) FROM review WHERE film_id = %s", film_id)
    finally:
        connection.close()
    if container["State"] != "exited" or container["ExitCode"] != 0:
        logs = stack.compose("logs", "--no-color", "--tail", "60", app, check=False).stdout
        pytest.fail(f"{app} stopped as {container}:\n{logs[-6000:]}")
    assert took < STOP_GRACE, f"{app} took {took:.1f} s to stop"
    created = outcomes.count(201)
    assert created > 0 and not [o for o in outcomes if isinstance(o, int) and o >= 500], outcomes
    # The ledger's rule (tests/faults.py): every 201 is a row; a row without
    # its 201 is a request in flight whose answer the stop lost (one per
    # writer at most: a write is one statement, docs/contract.md "Writes").
    failed = sorted({o for o in outcomes if not isinstance(o, int)})
    assert created <= rows <= created + WRITERS, f"{app}: {rows} rows, {created} x 201 ({failed})"


# -- Least privilege, from outside the stack ---------------------------------


def test_only_the_proxy_is_published(stack):
    """Of the running containers only the proxy's publish a port (and db's,
    which this test publishes on 127.0.0.1 for its own checks): the apps,
    PgBouncer and the upstream service answer on the stack's network only."""
    template = "{{json .NetworkSettings.Ports}}"
    published = {}
    for container in stack.containers():
        inspected = run(["docker", "inspect", "--format", template, container["ID"]], stack.env)
        ports = json.loads(inspected.stdout) or {}
        if any(bindings for bindings in ports.values()):
            published[container["Service"]] = ports
    assert set(published) == {"proxy", "db"}, published
    for app in APPS:
        assert stack.compose("port", app, "8000", check=False).stdout.strip() in ("", ":0")


def test_postgres_postgres_is_refused(stack):
    """The stack never runs with the image's example password: the
    superuser's is the generated secret."""
    port = stack.published("db", 5432)
    with pytest.raises(psycopg2.OperationalError, match="rejects connection"):
        psycopg2.connect(f"postgresql://postgres:postgres@127.0.0.1:{port}/dvdrental").close()
    assert len(stack.secret("postgres_password")) >= 40


def test_the_superuser_logs_in_over_the_local_socket_only(stack):
    """docker/db/pg_hba.conf: postgres with its own secret is refused over
    TCP, to any database; over db's socket it is the superuser."""
    for database in ("dvdrental", "postgres"):
        url = stack.database_url("postgres", "postgres_password").rsplit("/", 1)[0]
        with pytest.raises(psycopg2.OperationalError, match="rejects connection"):
            psycopg2.connect(f"{url}/{database}").close()
    psql = ["psql", "-At", "-U", "postgres", "-d", "dvdrental", "-c", "SHOW is_superuser"]
    assert run(["docker", "exec", stack.container("db"), *psql], stack.env).stdout == "on\n"


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE review",
        "TRUNCATE review",
        "ALTER TABLE review ADD COLUMN x integer",
        "COPY (SELECT 1) TO PROGRAM 'true'",
        "UPDATE film SET title = 'x' WHERE film_id = 995",
    ],
)
def test_the_apps_role_is_refused_what_is_not_its(stack, sql):
    """films_app, with the apps' secret, straight at Postgres."""
    url = stack.database_url(roles.APP, "app_password")
    connection = psycopg2.connect(url)
    try:
        with pytest.raises(psycopg2.errors.InsufficientPrivilege):
            query(connection, sql)
    finally:
        connection.close()


def test_the_apps_connect_as_their_role(stack):
    """PgBouncer's server connections (the apps') log in as films_app."""
    requests.get(f"{published_targets(stack)['proxy-8001']}/films/995/", timeout=10)
    connection = psycopg2.connect(stack.database_url())
    try:
        users = query(
            connection,
            "SELECT DISTINCT usename FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
    finally:
        connection.close()
    assert (roles.APP,) in users and ("postgres",) not in users, users


@pytest.mark.parametrize("command", ["SHOW POOLS", "PAUSE"])
def test_the_apps_credentials_cannot_reach_pgbouncers_console(stack, command):
    password = stack.secret("app_password")
    url = f"postgresql://{roles.APP}:{password}@{stack.address('pgbouncer')}:6432/pgbouncer"
    with pytest.raises(psycopg2.OperationalError, match=REFUSED_AT_THE_CONSOLE):
        connection = psycopg2.connect(url)
        connection.autocommit = True
        query(connection, command)


def test_compose_refuses_to_start_without_the_secrets(stack, tmp_path):
    """No secrets folder: `docker compose up` creates no container, and says
    which secret file it misses (docs/deploy.md: python3 -m tools.secrets)."""
    env = {**stack.env, "SECRETS_DIR": str(tmp_path / "none")}
    project = f"{PROJECT}nosecrets"
    command = ["docker", "compose", "-p", project, "-f", str(ROOT / "compose.yaml")]
    try:
        up = run([*command, "up", "--detach", "--no-build", "db"], env, check=False, timeout=120)
        assert up.returncode != 0
        assert "does not exist" in up.stderr and str(tmp_path / "none") in up.stderr, up.stderr
        running = run(
            ["docker", "ps", "--quiet", "--filter", f"label=com.docker.compose.project={project}"],
            env,
        )
        assert running.stdout.split() == []
    finally:
        run([*command, "down", "--volumes", "--remove-orphans"], env, check=False, timeout=120)
