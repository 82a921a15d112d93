"""`docker compose up`, for real: the stack built, started, probed, measured, stopped.

Where Docker can run (root, Debian's docker.io: .ci/run installs it), the
module starts dockerd if none is running, builds the stand-in base images
(docker/standins/build.sh: cached between runs), then `docker compose up -d
--wait` with every published port moved to a free port of 127.0.0.1 (and
db's published there too, for the contract suite's database checks). Then,
for every service: running, healthy if it has a healthcheck; for every
published port (an app, or a proxy in front of one): the contract suite
(tests/test_contract.py); the bench service's run and its JSON; `docker
compose stop` of each app under writes. At the end `docker compose down -v`
and the removal of what the test built: no container, volume, network or app
image is left, nor a daemon it started (nor that daemon's host networking).
Elsewhere the module skips with its reason, or in CI (CI set) fails.
"""

import contextlib
import fcntl
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg2
import pytest
import requests

from db.embedded import free_port
from tests.helpers import query
from tools import ROOT
from tools.serve import APPS

pytestmark = pytest.mark.slow  # the whole stack in Docker


VENV_BIN = Path(sys.prefix) / "bin"
BUILD_STANDINS = ROOT / "docker" / "standins" / "build.sh"
STANDINS = ["python:3.11-slim-bookworm", "postgres:18.6", "nginx:1.22"]
PROJECT = f"e2e{os.getpid()}"
STOP_GRACE = 10  # seconds: docker compose stop's default, before SIGKILL
WRITERS = 4  # threads posting reviews while an app is stopped


def unavailable(reason):
    """Skip, or in CI fail: CI must run this module."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def run(args, env, timeout=120, check=True):
    completed = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and completed.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: {completed.returncode}\n{completed.stderr}")
    return completed


def daemon_answers(env):
    return run(["docker", "info"], env, timeout=20, check=False).returncode == 0


@contextlib.contextmanager
def exclusive(name):
    """One compose end-to-end run at a time on this machine (a shared daemon)."""
    with open(Path(tempfile.gettempdir()) / name, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def docker_daemon(env, log_dir):
    """The running daemon, or dockerd started here (default data root, so that
    the stand-ins stay cached) and stopped at the end."""
    if daemon_answers(env):
        yield
        return
    if os.geteuid() != 0 or not shutil.which("dockerd"):
        unavailable("no Docker daemon running, and none can be started (needs root and dockerd)")
    host_network = HostNetwork()
    with open(log_dir / "dockerd.log", "w") as log:
        process = subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not daemon_answers(env):
            assert process.poll() is None, (log_dir / "dockerd.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "dockerd did not answer within 60 s"
            time.sleep(0.5)
        yield
    finally:
        process.terminate()
        process.wait(timeout=60)
        host_network.restore()


class HostNetwork:
    """What dockerd changes on the host and leaves when it stops: its bridge,
    its iptables chains and rules, the FORWARD policy (DROP) and IP forwarding.
    Other tests here route through network namespaces: give it all back."""

    FORWARDING = Path("/proc/sys/net/ipv4/ip_forward")

    def __init__(self):
        self.had_bridge = Path("/sys/class/net/docker0").exists()
        self.forwarding = self.FORWARDING.read_text()
        rules = subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True)
        self.policy = rules.stdout.split()[2] if rules.returncode == 0 else None

    def restore(self):
        if not self.had_bridge:
            subprocess.run(["ip", "link", "delete", "docker0"], capture_output=True)
        self.FORWARDING.write_text(self.forwarding)
        if self.policy is None:
            return
        saved = subprocess.run(["iptables-save"], capture_output=True, text=True, check=True)
        kept = [
            line
            for line in saved.stdout.splitlines()
            if "DOCKER" not in line and "docker0" not in line
        ]
        subprocess.run(["iptables-restore"], input="\n".join(kept) + "\n", text=True, check=True)
        subprocess.run(["iptables", "-P", "FORWARD", self.policy], check=True)


def compose_plugin(config_dir):
    """A DOCKER_CONFIG whose CLI plugin is the pinned Docker Compose
    (requirements-dev.txt), leaving the user's ~/.docker alone."""
    binary = shutil.which("docker-compose", path=str(VENV_BIN))
    if binary is None:
        unavailable("docker-compose is not installed: see requirements-dev.txt")
    plugins = config_dir / "cli-plugins"
    plugins.mkdir(parents=True)
    (plugins / "docker-compose").symlink_to(binary)
    return str(config_dir)


def port_below_ephemeral_range():
    """A free port on 127.0.0.1 under the kernel's ephemeral range. Docker
    gives `127.0.0.1::8000` the first free ephemeral port: the range where
    other tests on this machine pick a port with bind(0), then start a server
    on it, and could find (and measure) one of ours there instead."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.sample(range(max(1024, low - 10000), low), 200):
        with contextlib.suppress(OSError):
            return free_port(port)
    raise AssertionError("no free port under the ephemeral range")


def loopback_override(services, path):
    """A compose file that publishes every published port, and db's 5432, on a
    free port of 127.0.0.1 only: no clash with what runs here, no traffic
    from outside. `!override` replaces the list instead of adding to it."""
    lines = ["services:"]
    for name, service in services.items():
        targets = [port["target"] for port in service.get("ports", [])]
        if name == "db":
            targets.append(5432)
        if targets:
            lines += [f"  {name}:", "    ports: !override"]
            lines += [f'      - "127.0.0.1:{port_below_ephemeral_range()}:{t}"' for t in targets]
    path.write_text("\n".join(lines) + "\n")


class Stack:
    """The compose project: `compose(...)` runs `docker compose` on it."""

    def __init__(self, env, files):
        self.env = env
        self.files = files

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
        [container] = [c for c in self.containers() if c["Service"] == service]
        template = "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}"
        inspect = run(["docker", "inspect", "--format", template, container["ID"]], self.env)
        return inspect.stdout.split()[0]

    def database_url(self):
        db = self.config()["db"]["environment"]
        port = self.published("db", 5432)
        return (
            f"postgresql://{db['POSTGRES_USER']}:{db['POSTGRES_PASSWORD']}"
            f"@127.0.0.1:{port}/{db['POSTGRES_DB']}"
        )


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


def images(env):
    return set(run(["docker", "image", "ls", "--all", "--quiet", "--no-trunc"], env).stdout.split())


def build_standins(env):
    """Stand-ins for the base images this machine does not have (build.sh never
    replaces a real one, and keeps its own while their inputs are the same).
    Where none can be built, `docker compose up` pulls the real images, as on
    a user's machine: no pull is tried here, as no registry is reachable where
    this project is developed."""
    inspect = ["docker", "image", "inspect"]
    absent = [tag for tag in STANDINS if run([*inspect, tag], env, check=False).returncode]
    if os.geteuid() == 0 and shutil.which("debootstrap"):
        run(["bash", str(BUILD_STANDINS)], env, timeout=900)
    elif absent and os.environ.get("CI"):
        unavailable(f"no {', '.join(absent)}, and no debootstrap (root) to build stand-ins")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    if not shutil.which("docker"):
        unavailable("no docker CLI: apt-get install docker.io (.ci/run)")
    tmp = tmp_path_factory.mktemp("compose-up")
    env = {**os.environ, "DOCKER_CONFIG": compose_plugin(tmp / "docker-config")}
    # Sequential builds: the four app services build the same Dockerfile, and
    # the classic builder's cache serves the second to fourth only in turn.
    env["COMPOSE_PARALLEL_LIMIT"] = "1"
    for name in ("COMPOSE_FILE", "COMPOSE_PROFILES", "COMPOSE_PROJECT_NAME"):
        env.pop(name, None)
    with exclusive("compose-up-e2e.lock"), docker_daemon(env, tmp):
        build_standins(env)
        before = images(env)
        stack = Stack(env, [ROOT / "compose.yaml"])
        loopback_override(stack.config(), tmp / "loopback.yaml")
        stack.files.append(tmp / "loopback.yaml")
        try:
            up = stack.compose("up", "--detach", "--wait", timeout=900, check=False)
            if up.returncode != 0:
                logs = stack.compose("logs", "--no-color", "--tail", "40", check=False).stdout
                pytest.fail(f"docker compose up failed:\n{up.stderr[-3000:]}\n{logs[-5000:]}")
            yield stack
        finally:
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
            dangling = run(
                ["docker", "image", "ls", "--quiet", "--no-trunc", "--filter", "dangling=true"], env
            ).stdout.split()
            new = [image for image in dangling if image not in before]
            named = project_leftovers(env)["image"]
            if new or named:
                run(["docker", "image", "rm", "--force", *new, *named], env, check=False)
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


def test_contract_suite_passes_on_every_published_port(stack):
    """tests/test_contract.py, the suite every app passes outside Docker,
    against each published port, with the stack's database."""
    targets = published_targets(stack)
    assert targets
    env = {
        **os.environ,
        "DATABASE_URL": stack.database_url(),
        "TEST_SERVERS": " ".join(f"{name}={url}" for name, url in targets.items()),
    }
    pytest_args = ["-q", "-x", "-p", "no:cacheprovider", "tests/test_contract.py"]
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


def test_bench_service_measures_and_loses_nothing(stack, tmp_path):
    """`docker compose run --rm bench quart --duration 2s`; its results/ is
    mounted here to read the JSON report."""
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # the bench runs as the image's user, not root
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
    [report] = results.glob("*.json")
    measurements = json.loads(report.read_text())["measurements"]
    assert {m["route"] for m in measurements} == {"film", "films", "review"}
    for measurement in measurements:
        summary = measurement["summary"]
        assert summary["requests"] > 0, measurement
        assert summary["socket_errors"] == summary["non_2xx"] == 0, measurement
    [review] = [m for m in measurements if m["route"] == "review"]
    assert review["ledgers"] and all(ledger["ok"] for ledger in review["ledgers"]), review


def post_until(url, film_id, stop_event, outcomes):
    """POST reviews until stop_event; record each status (or the error)."""
    session = requests.Session()
    while not stop_event.is_set():
        try:
            response = session.post(
                f"{url}/reviews/", json={"film_id": film_id, "rating": 3}, timeout=10
            )
            outcomes.append(response.status_code)
        except requests.RequestException as error:
            outcomes.append(type(error).__name__)
            time.sleep(0.05)


@pytest.mark.parametrize("app", APPS)
def test_stop_under_writes_loses_nothing_and_exits_in_time(stack, app):
    """`docker compose stop APP` while it takes writes: the server gets the
    signal (PID 1), finishes what is in flight, and exits 0 within the grace
    period; every 201 is a row, and no refused write is one."""
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
    assert container["State"] == "exited" and container["ExitCode"] == 0, container
    assert took < STOP_GRACE, f"{app} took {took:.1f} s to stop"
    created = outcomes.count(201)
    assert created > 0 and not [o for o in outcomes if isinstance(o, int) and o >= 500], outcomes
    assert rows == created, f"{app}: {rows} rows for {created} answers 201"
