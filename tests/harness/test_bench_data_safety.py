"""No way of running the benchmark deletes or changes a row it did not write.

A run used to empty the review table (TRUNCATE review RESTART IDENTITY) of any
database it was given, a user's included. Now it writes only to a film of its
own and removes that film and its reviews at its end (bench/sut/run_film.py).

Here a private Postgres holds the sample data plus rows that are "yours":
reviews of several films, some with Idempotency-Keys, ids with gaps, and
sequences moved ahead of the rows. Every documented entry point of the bench
runs against it: ./benchmark.sh starting an app on your database, ./benchmark.sh
--target (docker/bench.sh's form), the compose bench's entrypoint
(docker/bench.sh) and the Kubernetes bench's command as kustomize renders it,
each run as written inside a network and mount namespace where the app's
service name resolves as in its stack; and a run killed outright, then the run
after it. Before and after: a checksum of every row of review and film, and
the sequences, which may only move forward. (The compose end-to-end test and
the three-host test check the same on their own stacks.)
"""

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psycopg2
import pytest
import yaml

from db.embedded import free_port
from tests.helpers import (
    add_rows_of_yours,
    assert_unchanged,
    query,
    run_benchmark,
    snapshot,
    socket_url,
)
from tools import ROOT
from tools.serve import running

pytestmark = pytest.mark.slow  # benchmark runs, a Postgres and apps of its own

SHORT = ["--duration", "1s", "--warmup", "0", "-c", "4"]


@pytest.fixture(scope="module")
def yours(postgres):
    """postgres' database with rows of yours in it; its URL."""
    add_rows_of_yours(postgres.url)
    return postgres.url


@pytest.fixture
def unchanged(yours):
    """Fails the test if a row that was there before it differs after it, or a
    sequence went back; yields a connection to the database."""
    before = snapshot(yours)
    assert before[0]["review"][0][0] > 300
    connection = psycopg2.connect(yours)
    connection.autocommit = True
    yield connection
    connection.close()
    assert_unchanged(before, snapshot(yours))


def reviews_written(output):
    """The run's own reviews, as its last line about them says."""
    [line] = [line for line in output.splitlines() if line.startswith("removed the run's film")]
    return int(line.split(" its ")[1].split()[0])


def test_a_run_that_starts_the_app_on_your_database(unchanged, yours, tmp_path):
    """Every route and pgbench's ceiling (which writes too), against your
    database given with --database-url."""
    run = run_benchmark("flask", "--database-url", yours, *SHORT, "--results", str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "removed the run's film" in run.stdout


def test_a_run_against_a_server_of_yours(unchanged, yours, tmp_path):
    """docker/bench.sh's form: --target and --database-url."""
    port = free_port()
    with running("quart", port, yours, tmp_path / "quart.log", web_workers=1) as server:
        run = run_benchmark(
            "quart",
            *("--target", server.url, "--database-url", yours, "--routes", "review"),
            *(*SHORT, "--no-pgbench", "--results", str(tmp_path)),
        )
    assert run.returncode == 0, run.stdout + run.stderr
    assert reviews_written(run.stdout) == 0  # each POST run's removed as it ends


def test_a_target_without_the_database_writes_nothing(unchanged, yours, tmp_path):
    """Without --database-url the run could neither count nor remove reviews:
    it measures the reads only, and refuses review in one sentence."""
    port = free_port()
    with running("flask", port, yours, tmp_path / "flask.log", web_workers=1) as server:
        refused = run_benchmark("flask", "--target", server.url, "--routes", "review", *SHORT)
        reads = run_benchmark("flask", "--target", server.url, *SHORT, "--results", str(tmp_path))
    assert refused.returncode != 0 and "give --database-url" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert reads.returncode == 0, reads.stdout + reads.stderr
    assert "| POST /reviews/ |" not in reads.stdout


def test_a_killed_run_leaves_only_its_own_rows_which_the_next_run_removes(
    unchanged, yours, tmp_path
):
    port = free_port()
    with running("sanic", port, yours, tmp_path / "sanic.log", web_workers=1) as server:
        args = ["--target", server.url, "--database-url", yours, "--routes", "review"]
        args += ["--duration", "20s", "--warmup", "0", "-c", "4", "--no-pgbench"]
        killed = subprocess.Popen(
            ["./benchmark.sh", "sanic", *args, "--results", str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # wrk with it, in its process group
        )
        for line in killed.stdout:
            if "POST /reviews/" in line:
                break
        time.sleep(2)  # reviews written
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        killed.stdout.close()
        time.sleep(1)  # the requests in flight land
        left = query(unchanged, "SELECT count(*) FROM review WHERE film_id > 5000")[0][0]
        assert left > 0
        args = [arg if arg != "20s" else "1s" for arg in args]
        after = run_benchmark("sanic", *args, "--results", str(tmp_path))
    assert after.returncode == 0, after.stdout + after.stderr
    assert f"removed 1 film(s) and {left} review(s) that an interrupted" in after.stdout


def kubernetes_command():
    """The Kubernetes bench's container: (command, environment), as rendered."""
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "deploy" / "k8s" / "base")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [cronjob] = [o for o in yaml.safe_load_all(rendered) if o and o["kind"] == "CronJob"]
    [container] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    values = {item["name"]: item.get("value") for item in container["env"]}
    return container["command"], values["APP"]


INSIDE = """
set -eu
mount --bind "$HOSTS" /etc/hosts
ip link set lo up
HOST=127.0.0.1 PORT=8000 WEB_WORKERS=1 DATABASE_URL="$DIRECT_DATABASE_URL" \
    sh "${APP}_app/serve.sh" > "$APP_LOG" 2>&1 &
app=$!
python -c "
import time, urllib.request
for _ in range(150):
    try:
        urllib.request.urlopen('http://$APP:8000/health', timeout=1)
        break
    except OSError:
        time.sleep(0.2)
"
status=0
"$@" || status=$?
kill -TERM "$app"
wait
exit "$status"
"""


def in_the_stack(command, app, database_url, tmp_path):
    """Run command as its container would: in a network and mount namespace of
    its own, where the app's service name (its host in compose and
    Kubernetes) is this namespace's 127.0.0.1 and the app listens on 8000."""
    hosts = tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1 localhost {app}\n")
    environment = {
        **os.environ,
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOSTS": str(hosts),
        "APP": app,
        "APP_LOG": str(tmp_path / f"{app}.log"),
        "DIRECT_DATABASE_URL": database_url,
        "DATABASE_URL": database_url,
    }
    return subprocess.run(
        ["unshare", "--net", "--mount", "--propagation", "private"]
        + ["sh", "-c", INSIDE, "inside", *command],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("entry", ["docker/bench.sh", "kubernetes"])
def test_the_container_entry_points_as_written(unchanged, yours, postgres, tmp_path, entry):
    """compose's `docker compose run --rm bench APP` runs docker/bench.sh; the
    Kubernetes bench runs its rendered command (its defaults, in full)."""
    url = socket_url(yours, postgres.data_dir)
    if entry == "kubernetes":
        command, app = kubernetes_command()
    else:
        command = ["sh", "docker/bench.sh", "falcon", *SHORT, "--no-pgbench"]
        command, app = [*command, "--results", str(tmp_path)], "falcon"
    run = in_the_stack(command, app, url, tmp_path)
    for line in run.stdout.splitlines():  # the Kubernetes command names no folder:
        if line.startswith("saved results/"):  # the run's own, made by it alone
            shutil.rmtree((ROOT / line.removeprefix("saved ")).parent, ignore_errors=True)
    log = Path(tmp_path / f"{app}.log").read_text(errors="replace")
    assert run.returncode == 0, run.stdout + run.stderr + log
    assert "removed the run's film" in run.stdout
    assert "| POST /reviews/ |" in run.stdout
