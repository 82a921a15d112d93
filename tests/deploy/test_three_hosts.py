"""The three-host benchmark, on one machine: generator, app and Postgres each
in a network namespace of its own (its own interface and address), joined by
a bridge in a fourth; no route leads out of them. Postgres (db/embedded.py,
listening on its host's address: PGEMBED_LISTEN) runs in `db`, Quart under
its production server in `app`, and from `gen`:

    ./benchmark.sh quart --target http://APP:8000 --database-url postgresql://...@DB/...

so the ledger (every 201 a row) and pgbench's ceiling cross hosts as on real
ones (docs/deploy.md). Needs root (ip netns); elsewhere it skips, in CI fails.
The namespaces, the servers and the data directory go at the end.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers import (
    add_rows_of_yours,
    assert_unchanged,
    clean_bench_report,
    snapshot,
    socket_url,
)
from tests.system_tools import system_tool, unavailable
from tools import ROOT

# starts Postgres, an app and the bench; routes between namespaces (docker)
pytestmark = [pytest.mark.slow, pytest.mark.docker]

PREFIX = f"th{os.getpid()}"
SUBNET = "10.203.113"  # private, and only inside the namespaces made here
HOSTS = {"db": 1, "app": 2, "gen": 3}
APP = "quart"


def sh(*args, timeout=60):
    completed = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, f"{' '.join(args)}:\n{completed.stderr}{completed.stdout}"
    return completed.stdout


def address(host):
    return f"{SUBNET}.{HOSTS[host]}"


def inside(host, *args):
    """argv that runs args in host's namespace."""
    return ["ip", "netns", "exec", f"{PREFIX}-{host}", *args]


@contextlib.contextmanager
def network():
    """Three hosts on one switch: a bridge in namespace `sw`, a veth from
    each host's namespace to it."""
    system_tool("ip")
    if os.geteuid() != 0:
        unavailable("network namespaces need root")
    switch = f"{PREFIX}-sw"
    made = []
    try:
        for name in [switch, *(f"{PREFIX}-{host}" for host in HOSTS)]:
            sh("ip", "netns", "add", name)
            made.append(name)
        sh("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", switch, "link", "set", "br0", "up")
        for host, number in HOSTS.items():
            namespace = f"{PREFIX}-{host}"
            # Made in the host's namespace, its peer moved to the switch: the
            # machine's own namespace never holds either end.
            sh(
                "ip",
                "-n",
                namespace,
                "link",
                "add",
                "eth0",
                "type",
                "veth",
                "peer",
                "name",
                f"p{number}",
                "netns",
                switch,
            )
            sh("ip", "-n", switch, "link", "set", f"p{number}", "master", "br0", "up")
            sh("ip", "-n", namespace, "addr", "add", f"{address(host)}/24", "dev", "eth0")
            sh("ip", "-n", namespace, "link", "set", "eth0", "up")
            sh("ip", "-n", namespace, "link", "set", "lo", "up")
        yield
    finally:
        for name in reversed(made):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)


@contextlib.contextmanager
def postgres():
    """The embedded Postgres in `db`, on its own data directory: (its URL as
    the other hosts reach it, its URL from this machine's namespace)."""
    # Not under tmp_path: as root, the server runs as pgembed (db/embedded.py),
    # which must reach its data directory, and pytest's folders are private.
    data_dir = Path(tempfile.mkdtemp(prefix="three-hosts-")) / "pgdata"
    data_dir.parent.chmod(0o755)
    env = {**os.environ, "PGEMBED_DIR": str(data_dir), "PGEMBED_LISTEN": address("db")}
    env.pop("DATABASE_URL", None)
    python = [sys.executable, "-m"]
    start = subprocess.run(
        inside("db", *python, "db.embedded", "start"),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    local = start.stdout.strip()
    try:
        assert start.returncode == 0, start.stderr
        subprocess.run(
            inside("db", *python, "db.load"),
            cwd=ROOT,
            env={**env, "DATABASE_URL": local},
            timeout=120,
            check=True,
        )
        yield local.replace("@127.0.0.1:", f"@{address('db')}:"), socket_url(local, data_dir)
    finally:
        subprocess.run(inside("db", *python, "db.embedded", "stop"), cwd=ROOT, env=env, timeout=60)
        shutil.rmtree(data_dir.parent)


@contextlib.contextmanager
def app_server(database_url, log_path):
    """APP's serve.sh in `app`, on its host's address; waits for /health
    asked from `gen`."""
    env = {
        **os.environ,
        "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
        "DATABASE_URL": database_url,
        "HOST": address("app"),
        "PORT": "8000",
        "WEB_WORKERS": "2",
    }
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            inside("app", "sh", f"{APP}_app/serve.sh"),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://{address('app')}:8000"
    probe = f"import urllib.request; urllib.request.urlopen('{url}/health', timeout=2)"
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(
            inside("gen", sys.executable, "-c", probe), capture_output=True
        ).returncode:
            assert process.poll() is None, log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)


def test_benchmark_across_three_hosts(tmp_path):
    """From `gen`: the bench measures the app on `app` and pgbench Postgres on
    `db`; the POST runs' ledgers balance; nothing reaches 127.0.0.1."""
    results = tmp_path / "results"
    with network(), postgres() as (database_url, here):
        add_rows_of_yours(here)  # the bench leaves them as they are
        before = snapshot(here)
        with app_server(database_url, tmp_path / "app.log") as url:
            bench = subprocess.run(
                inside(
                    "gen",
                    "./benchmark.sh",
                    APP,
                    "--target",
                    url,
                    "--database-url",
                    database_url,
                    "--duration",
                    "2s",
                    "--warmup",
                    "1s",
                    "--results",
                    str(results),
                ),
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
            )
        after = snapshot(here)
    assert bench.returncode == 0, bench.stdout[-3000:] + bench.stderr[-3000:]
    assert_unchanged(before, after)
    data = clean_bench_report(results)
    measurements = data["measurements"]
    assert {m["route"] for m in measurements} == {"film", "films", "review"}
    # pgbench, from `gen`, measured Postgres on `db`: its ceiling per route.
    assert {run["route"] for run in data["pgbench"]} == {"film", "films", "review"}
    assert all(run["tps"] > 0 and not run["failed"] for run in data["pgbench"]), data["pgbench"]
    print(json.dumps({"database": data["database"], "pgbench": data["pgbench"]}, indent=1))
    for m in measurements:
        print(m["route"], m["summary"]["requests_per_s"], "req/s")
