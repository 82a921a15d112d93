"""The database's own ceiling: pgbench running the apps' SQL, with the same
parameters, at the same number of connections as wrk.

The SQL is each route's (bench/routes.py: the apps' text, with pgbench
variables in place of the driver's placeholders), sent as prepared statements:
the fastest way a client can ask, so the ceiling is a ceiling.
"""

import re
import subprocess
import tempfile
from pathlib import Path

from bench.errors import BenchmarkError
from bench.sut.processes import taskset
from db import embedded


class PgbenchError(BenchmarkError):
    """pgbench failed or printed no figures."""


def command(database_url, script_path, clients, threads, duration, pin=None):
    args = [
        embedded.bin_path("pgbench"),
        "--no-vacuum",  # there are no pgbench tables to vacuum
        f"--client={clients}",
        f"--jobs={min(threads, clients)}",
        f"--time={duration}",
        "--protocol=prepared",
        f"--file={script_path}",
        database_url,
    ]
    return taskset(args, pin)


def run(database_url, route, clients, threads, duration, pin=None, log=None):
    """{"tps", "latency_ms", "failed", "transactions", "clients", "command"} for one route's SQL
    (a route that writes writes to its film: the run's, bench/routes.py)."""
    script = route.pgbench_script()
    with tempfile.TemporaryDirectory() as folder:
        script_path = Path(folder) / f"{route.key}.sql"
        script_path.write_text(script)
        args = command(database_url, script_path, clients, threads, duration, pin)
        completed = subprocess.run(args, capture_output=True, text=True)
    # As a reader would type it: no temporary paths, no credentials.
    shown = [
        {args[-1]: "$DATABASE_URL", str(embedded.bin_path("pgbench")): "pgbench"}.get(arg, arg)
        for arg in map(str, args)
    ]
    shown = [arg.replace(folder, ".") for arg in shown]
    if log is not None:
        log.write(f"$ {' '.join(shown)}\n{script}{completed.stdout}\n")
    if completed.returncode != 0:
        raise PgbenchError(f"pgbench failed: {completed.stderr.strip()}")
    result = parse_output(completed.stdout)
    return {**result, "clients": clients, "command": " ".join(shown)}


def parse_output(text):
    """pgbench's summary -> {"tps", "latency_ms", "failed", "transactions"}."""
    tps = re.search(r"^tps = ([0-9.]+)", text, re.MULTILINE)
    done = re.search(r"^number of transactions actually processed: (\d+)", text, re.MULTILINE)
    latency = re.search(r"^latency average = ([0-9.]+) ms", text, re.MULTILINE)
    failed = re.search(r"^number of failed transactions: (\d+)", text, re.MULTILINE)
    if not tps:
        raise PgbenchError(f"no tps in pgbench's output:\n{text}")
    return {
        "tps": float(tps.group(1)),
        "latency_ms": float(latency.group(1)) if latency else None,
        "failed": int(failed.group(1)) if failed else 0,
        "transactions": int(done.group(1)) if done else None,
    }
