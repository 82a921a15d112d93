"""Run wrk against one route and read the JSON line that lua/report.lua prints."""

import statistics
import subprocess

from bench.errors import BenchmarkError
from bench.records import Summary
from bench.sut.processes import marked_json, run_logged, taskset

PROGRAM = "wrk"  # scripts/system.sh installs it
LUA = "lua"  # relative to ROOT, where wrk runs: the command reads as a person types it
MARKER = "BENCH_JSON "


class WrkError(BenchmarkError):
    """wrk failed, or printed no report."""


def command(url, route, connections, threads, duration, timeout, pin=None, token_file=None):
    """The wrk command line for one run; pin is a CPU list for taskset. A
    route that posts carries the door's write token of token_file: lua/post.lua
    reads the file (its name on the command line, never the token)."""
    threads = min(threads, connections)  # wrk refuses more threads than connections
    args = [
        PROGRAM,
        f"--connections={connections}",
        f"--threads={threads}",
        f"--duration={duration}s",
        f"--timeout={timeout}s",
        f"--script={LUA}/{route.script}",
        url.rstrip("/") + route.path,
    ]
    if route.body:  # lua/post.lua sends what follows "--"
        args += ["--", route.body.decode(), *([str(token_file)] if token_file else [])]
    return taskset(args, pin)


def run(args, log=None):
    """Run wrk; its report as parse_report() returns it. Raises WrkError."""
    completed = run_logged(args, log)
    if completed.returncode != 0:
        raise WrkError(f"wrk exited with {completed.returncode}: {completed.stderr.strip()}")
    return parse_report(completed.stdout)


def parse_report(text):
    """wrk's output -> a dict: requests, requests_per_s, ok (2xx), non_2xx,
    socket_errors, statuses, latency_ms (mean, p50, p75, p90, p99, p99.9, max).

    Raises WrkError when the text holds no report line.
    """
    raw = marked_json(text, MARKER)
    if raw is None:
        raise WrkError("wrk printed no report (is lua/report.lua loaded?)")
    statuses = {int(status): count for status, count in raw["statuses"].items()}
    ok = sum(count for status, count in statuses.items() if 200 <= status < 300)
    latency = raw["latency_us"]
    errors = raw["errors"]
    return {
        "requests": raw["requests"],
        "duration_s": raw["duration_us"] / 1e6,
        "requests_per_s": raw["requests"] / (raw["duration_us"] / 1e6),
        "ok": ok,
        "ok_per_s": ok / (raw["duration_us"] / 1e6),
        "non_2xx": sum(statuses.values()) - ok,
        "statuses": statuses,
        # Connect, read, write errors and timeouts; wrk's "status" error is a
        # non-2xx response, counted above.
        "socket_errors": sum(errors[kind] for kind in ("connect", "read", "write", "timeout")),
        "errors": errors,
        "latency_ms": {
            "mean": latency["mean"] / 1000,
            **{f"p{p}": value / 1000 for p, value in latency["percentiles"].items()},
            "max": latency["max"] / 1000,
        },
    }


def summarize(reports):
    """Several runs of the same measurement -> their Summary: the median run's
    figures, with min and max requests/s and the errors of every run added up."""
    ordered = sorted(reports, key=lambda report: report["requests_per_s"])
    median = ordered[(len(ordered) - 1) // 2]
    return Summary(
        runs=len(reports),
        requests_per_s=statistics.median(r["requests_per_s"] for r in reports),
        requests_per_s_min=ordered[0]["requests_per_s"],
        requests_per_s_max=ordered[-1]["requests_per_s"],
        latency_ms=median["latency_ms"],
        requests=sum(r["requests"] for r in reports),
        socket_errors=sum(r["socket_errors"] for r in reports),
        non_2xx=sum(r["non_2xx"] for r in reports),
    )


def version():
    completed = subprocess.run(["wrk", "--version"], capture_output=True, text=True)
    first_line = (completed.stdout + completed.stderr).splitlines()[0]
    return first_line.split(" Copyright")[0].strip()
