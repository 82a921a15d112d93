"""Docker on this machine, for the tests that run the stack in it
(test_compose_up.py, test_swarm.py): the daemon (started here if none runs,
and the host given back after), the pinned Compose plugin, the stand-in base
images, loopback ports, and what is left behind.
"""

import contextlib
import fcntl
import json
import os
import random
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from db.embedded import free_port
from tests.system_tools import system_tool, unavailable
from tools import ROOT

VENV_BIN = Path(sys.prefix) / "bin"
BUILD_STANDINS = ROOT / "docker" / "standins" / "build.sh"
STANDINS = ["python:3.11-slim-bookworm", "postgres:18.6", "nginx:1.28.0", "debian:bookworm-slim"]


def ignored(pattern):
    """A .dockerignore line (names, *, ?, **) as a regular expression."""
    parts = re.split(r"(\*\*/|\*\*|\*|\?)", pattern.strip("/"))
    wildcards = {"**/": "(.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(wildcards.get(part, re.escape(part)) for part in parts))


def build_context_rules():
    """.dockerignore as (regex, left out) pairs, in order: a line starting
    with ! lets back in what an earlier one left out."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return [(ignored(p.removeprefix("!")), not p.startswith("!")) for p in patterns]


def left_out(path, rules):
    """Docker's rule: the last line that matches the path or one of its parent
    folders decides; a folder left out is entered only if a later line lets
    back in something beneath it (say !docker/bench.sh)."""
    decided = False
    prefixes = [path.rsplit("/", depth)[0] for depth in range(path.count("/"), -1, -1)]
    for regex, leave_out in rules:
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            decided = leave_out
    return decided


def run(args, env, timeout=120, check=True):
    completed = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and completed.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: {completed.returncode}\n{completed.stderr}")
    return completed


def answered_by(logs, agent):
    """The app addresses the proxy's access log names for the requests of
    this User-Agent (the answers name none: no internal address leaves the
    door)."""
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    return {line["upstream"].rsplit(":", 1)[0] for line in lines if line["user_agent"] == agent}


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
    system_tool("dockerd")
    if os.geteuid() != 0:
        unavailable("no Docker daemon running, and only root can start one")
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
    BRIDGES = {"docker0", "docker_gwbridge"}  # the default bridge, and a swarm's

    def __init__(self):
        self.had_bridges = {b for b in self.BRIDGES if Path(f"/sys/class/net/{b}").exists()}
        self.forwarding = self.FORWARDING.read_text()
        rules = subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True)
        self.policy = rules.stdout.split()[2] if rules.returncode == 0 else None

    def restore(self):
        for bridge in self.BRIDGES - self.had_bridges:
            subprocess.run(["ip", "link", "delete", bridge], capture_output=True)
        self.FORWARDING.write_text(self.forwarding)
        if self.policy is None:
            return
        saved = subprocess.run(["iptables-save"], capture_output=True, text=True, check=True)
        kept = [
            line
            for line in saved.stdout.splitlines()
            if "DOCKER" not in line and not any(bridge in line for bridge in self.BRIDGES)
        ]
        subprocess.run(["iptables-restore"], input="\n".join(kept) + "\n", text=True, check=True)
        subprocess.run(["iptables", "-P", "FORWARD", self.policy], check=True)


def compose_plugin(config_dir):
    """A DOCKER_CONFIG whose CLI plugin is the pinned Docker Compose
    (requirements-dev.txt), leaving the user's ~/.docker alone: linked by
    scripts/compose.sh, the step the README gives a user."""
    if shutil.which("docker-compose", path=str(VENV_BIN)) is None:
        unavailable("docker-compose is not installed: see requirements-dev.txt")
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "compose.sh"), "--pinned"],
        env={**os.environ, "DOCKER_CONFIG": str(config_dir)},
        check=True,
        capture_output=True,
    )
    return str(config_dir)


def loopback_ports(count):
    """count distinct free ports on 127.0.0.1, under the kernel's ephemeral
    range. Docker gives `127.0.0.1::8000` the first free ephemeral port: the
    range where other tests on this machine pick a port with bind(0), then
    start a server on it, and could find (and measure) one of ours there
    instead. Distinct by construction: each candidate is drawn once, so two
    services never get the same port (each being free alone is not enough:
    nothing binds it until Docker does)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = []
    for port in random.sample(range(max(1024, low - 10000), low), 200 + count):
        with contextlib.suppress(OSError):
            ports.append(free_port(port))
        if len(ports) == count:
            return ports
    raise AssertionError(f"not {count} free ports under the ephemeral range")


def loopback_override(services, path):
    """A compose file that publishes every published port, and db's 5432, on a
    free port of 127.0.0.1 only: no clash with what runs here, no traffic
    from outside. `!override` replaces the list instead of adding to it.
    Every healthcheck is asked every HEALTH_INTERVAL at most: a container is
    seen healthy that much sooner (Docker 20.10 has no start_interval), and
    the stack's every start, scale and update waits on it."""
    targets = {
        name: [port["target"] for port in service.get("ports", [])] + [5432] * (name == "db")
        for name, service in services.items()
    }
    ports = iter(loopback_ports(sum(map(len, targets.values()))))
    lines = ["services:"]
    for name, published in targets.items():
        check = services[name].get("healthcheck") or {}
        sooner = seconds(check.get("interval", "0s")) > HEALTH_INTERVAL
        if published or sooner:
            lines.append(f"  {name}:")
        if published:
            lines.append("    ports: !override")
            lines += [f'      - "127.0.0.1:{next(ports)}:{target}"' for target in published]
        if sooner:
            lines += ["    healthcheck:", f"      interval: {HEALTH_INTERVAL}s"]
    path.write_text("\n".join(lines) + "\n")


HEALTH_INTERVAL = 2  # seconds: five Python healthchecks each, 0.1 core of 2


def seconds(duration):
    """A compose duration as `docker compose config` writes it ("10s", "1m30s")."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"([0-9.]+)(ms|h|m|s)", str(duration))
    return sum(float(number) * units[unit] for number, unit in parts)


# The tests' own superuser on a stack's Postgres: the stack's, postgres, logs
# in over db's local socket only (docker/db/pg_hba.conf), and the tests read
# and reset the database over TCP from here.
TEST_SUPERUSER = "films_test_admin"


def add_test_superuser(env, container):
    """Makes TEST_SUPERUSER in the Postgres of `container` (its id), as the
    stack's superuser over the container's socket; returns its password."""
    password = secrets.token_hex(24)
    sql = f"CREATE ROLE {TEST_SUPERUSER} SUPERUSER LOGIN PASSWORD '{password}'"
    psql = ["psql", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-d", "dvdrental", "-c", sql]
    run(["docker", "exec", container, *psql], env)
    return password


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


def remove_new_images(env, before, named=()):
    """The images a run built and left (intermediate stages, untagged) and the
    named ones it made; `before` is images(env) from before the build."""
    dangling = run(
        ["docker", "image", "ls", "--quiet", "--no-trunc", "--filter", "dangling=true"], env
    ).stdout.split()
    new = [image for image in dangling if image not in before]
    if new or named:
        run(["docker", "image", "rm", "--force", *new, *named], env, check=False)


# A module's images are kept as the next module's build cache (the compose
# and Swarm modules build the same Dockerfiles), tagged CACHE:<project>-<service> until
# the session ends (tests/deploy/conftest.py): removing a project's images
# then leaves their layers, and the next build reuses them.
CACHE = "films-test-build-cache"


def keep_as_cache(env, project):
    """Tag each image `project` built (<project>-<service>) CACHE:<project>-<service>."""
    listed = ["docker", "image", "ls", "--format", "{{.Repository}}"]
    for repository in set(run([*listed, "--filter", f"reference={project}-*"], env).stdout.split()):
        run(["docker", "tag", repository, f"{CACHE}:{repository}"], env)


def cached(env):
    """The CACHE images' references."""
    listed = ["docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}"]
    return run([*listed, "--filter", f"reference={CACHE}"], env).stdout.split()


def post_until(url, film_id, stop_event, outcomes, headers=None, pause=0.0):
    """POST reviews until stop_event; record each status (or the error).
    Through the door: its write token in headers, and a pause between writes
    that keeps the writers under its write rate (proxy/door.conf). A connection
    not made within 2 s is an error: once a container stops, a connection to
    its address is never answered, and each writer would wait out its 10 s
    (measured: the stop took 0.7 s, the writers 10 more)."""
    session = requests.Session()
    while not stop_event.is_set():
        try:
            response = session.post(
                f"{url}/reviews/",
                json={"film_id": film_id, "rating": 3},
                headers=headers,
                timeout=(2, 10),  # (to connect, to answer)
            )
            outcomes.append(response.status_code)
        except requests.RequestException as error:
            outcomes.append(type(error).__name__)
            time.sleep(0.05)
        time.sleep(pause)
