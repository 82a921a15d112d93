"""aiohttp or httpx for the calls out? docs/migration.md's choice of client, measured.

quart_app/ (aiohttp's ClientSession) and its httpx variant (quart_httpx.patch:
httpx's AsyncClient, the tree docs/migration/steps.sh makes), each under its
own serve.sh with one worker process, loaded by wrk on GET /films/995/ratings/
at each of CONNECTIONS while three sources of the upstream (python -m
upstream) answer its fan-out after DELAY. In rotation, REPEAT times each:
requests per second, p99, the answers that were not 200 (a 504 when no source
answered within UPSTREAM_TIMEOUT, 1 s), and the CPU time the app's processes
spent per request (read from /proc before and after each run), with the
upstream's own CPU per answer beside it. Every server and the database are
stopped at the end:

    .venv/bin/python -m docs.examples.clients_bench > docs/results/2026-11-25-http-clients.json
"""

import contextlib
import statistics
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

from bench.load import wrk
from db import embedded
from docs.examples.report import print_report
from infra import procfs
from tools import ROOT
from tools.serve import TREE_COMMAND, database, running, tree_settings
from upstream.process import launched

DELAY = "10ms"  # each source's, per answer
SOURCES = 3
CONNECTIONS = (10, 50)  # wrk's, one after the other
SECONDS = 10
WARMUP = 2
REPEAT = 3
ROUTE = SimpleNamespace(script="report.lua", path="/films/995/ratings/", body=None)
# name: the tree steps.sh makes (None: the project's own quart_app/)
CLIENTS = {"aiohttp": None, "httpx": "quart-httpx"}


def measure(url, pid, upstream, connections):
    """One wrk run: req/s, p99 ms, answers not 200, app CPU ms per request,
    upstream CPU us per answer and its saturated seconds."""
    before, answered = procfs.cpu_seconds(pid), upstream.stats()
    report = wrk.run(wrk.command(url, ROUTE, connections, 2, SECONDS, 10))
    cpu, after = procfs.cpu_seconds(pid) - before, upstream.stats()
    upstream_cpu = after["cpu_seconds"] - answered["cpu_seconds"]
    return {
        "requests_per_s": round(report["requests_per_s"], 1),
        "p99_ms": round(report["latency_ms"]["p99"], 1),
        "not_200": report["non_2xx"] + report["socket_errors"],
        "cpu_ms_per_request": round(cpu / report["requests"] * 1000, 3),
        "upstream_cpu_us_per_answer": round(
            upstream_cpu / (after["answered"] - answered["answered"]) * 1e6, 1
        ),
        "upstream_saturated_seconds": after["saturated_seconds"] - answered["saturated_seconds"],
    }


def summary(runs):
    """Each figure's median, and min and max, over the runs."""
    return {
        key: {
            "median": statistics.median(run[key] for run in runs),
            "min": min(run[key] for run in runs),
            "max": max(run[key] for run in runs),
        }
        for key in runs[0]
    }


def main():
    with contextlib.ExitStack() as cleanup:
        trees = Path(cleanup.enter_context(tempfile.TemporaryDirectory()))
        subprocess.run(
            ["bash", str(ROOT / "docs/migration/steps.sh"), "expand", str(trees)], check=True
        )
        url = cleanup.enter_context(database())
        log = cleanup.enter_context(open(trees / "upstream.log", "w"))
        upstream = cleanup.enter_context(launched([0] * SOURCES, DELAY, log))
        servers = {}
        for name, tree in CLIENTS.items():
            port = embedded.free_port()
            settings = {
                **tree_settings(trees / tree if tree else ROOT, "quart"),
                "web_workers": 1,
                "upstream_fanout": " ".join(upstream.urls),
            }
            log_path = trees / f"{name}.log"
            servers[name] = cleanup.enter_context(
                running("quart", port, url, log_path, command=TREE_COMMAND, **settings)
            )
        runs = {f"{name} -c {c}": [] for c in CONNECTIONS for name in CLIENTS}
        for server in servers.values():  # a warm-up, measured nowhere
            wrk.run(wrk.command(server.url, ROUTE, CONNECTIONS[0], 2, WARMUP, 10))
        for _ in range(REPEAT):
            for connections in CONNECTIONS:
                for name, server in servers.items():
                    measured = measure(server.url, server.process.pid, upstream, connections)
                    runs[f"{name} -c {connections}"].append(measured)
    print_report(
        "python -m docs.examples.clients_bench",
        route=ROUTE.path,
        sources=SOURCES,
        source_delay=DELAY,
        wrk=f"--connections={','.join(map(str, CONNECTIONS))} --threads=2 --duration={SECONDS}s",
        web_workers=1,
        repeat=REPEAT,
        clients={name: summary(each) for name, each in runs.items()},
        runs=runs,
    )


if __name__ == "__main__":
    main()
