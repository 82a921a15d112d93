"""The explorer's view of one run: its JSON form (bench/records.py to_json)
reduced to what the page shows, in plain values the page's script reads.

A run is its facts (command, commit, machine), its configuration as read back
from the running servers (the AppRuns), and its cells: one per figure measured,
each located by its dimensions (DIMS: database delay, clients, offered rate)
and carrying req/s with its interval, latency percentiles, memory, and the
connections the app held.

The page shows what a run carries and nothing it does not. The fields below
are read when present and simply absent otherwise:
- the run's `capacity` (bench/records.py Capacity, --slo): per app, deployment,
  database delay, route and connection count, `capacity_rps`, the most req/s
  within a latency objective: {"value", "ci95": [low, high] or None,
  "objective": {"percentile": 99, "ms": 100}}; shown on the closed-loop cell
  of the same app and condition, whose peak its search started from;
- on a closed-loop Peak or an open-loop Rate, `cpu_us_per_request`:
  {part: µs} (bench/sut/cost.py PARTS: app, postgres, pgbouncer, nginx,
  delay_proxy, upstream, generator), each a number or {"value", "ci95"}; the
  page's total is the serving parts', the generator apart;
- on a Peak's summary, `requests_per_s_ci95`: [low, high] (else the interval is
  the min-max of its runs, when it has several);
- on the run, `overload` (--overload): per app, deployment, route, database
  delay and connection count, each multiple of its capacity offered, with
  `goodput_rps` ({"value", "ci95"}: 2xx within the objective per second),
  `late_rps`, `refused_rps` (503), `errors_rps` ({kind: per second}),
  `refusal_ms` ({"p50", "p99"} or None), `kept_schedule`: the goodput curve;
- on the run, `spike` (--spike): per app, deployment, route, database delay
  and connection count, the step load's `phases`, `spike_end_s`,
  `recovery_s` ({"value", "ci95"}), `goodput_rps` per phase and
  `per_second` (each second's offered `rate` and, per run, `p99_ms`,
  `good`, `refused`): the spike and the recovery;
- on the run, `profiles` (--profile): per app, deployment, route, database
  delay, sources and rate, `layers_us` ({layer: µs}, bench/layers.py),
  the app's `cpu_us_per_request`, the samples, and the flame graph's file
  beside the JSON (bench/report/flame.py file_name): where its CPU went;
- on the run, `ratios`: [{"app", "deployment", "baseline", "route",
  "db_delay_ms", "connections", "metric", "value", "ci95"}], and
  `noise_floor`: the A/A ratios, [{"value", "ci95", ...}], the first shown.
"""

import functools
import math
import re

from bench.intervals import median
from bench.report import flame
from bench.routes import ROUTES
from infra import ROOT, apps

# The dimensions a cell is located by: key -> (label, unit). A cell's value is
# None where the dimension does not apply (a closed-loop peak has no offered
# rate). Any other axis a run sweeps is one entry here and one in located().
DIMS = {
    "delay": ("database delay", "ms"),
    "clients": ("clients", ""),  # wrk's connections, or the open-loop generator's
    "rate": ("offered rate (open loop)", "req/s"),
}
APP_FIELDS = [  # what ran, as read back (bench/records.py AppRun), in the table's order
    "app",
    "deployment",
    "db_delay_ms",
    "status",
    "reason",
    "server",
    "workers",
    "threads",
    "worker_class",
    "in_flight",
    "pool_size",
    "db_connections",
    "replicas",
    "proxy",
    "pgbouncer",
    "os_threads",
    "pss_rest_mib",
    "differs",
    "server_command",
    "settings",
    "versions",
]


def rounded(value, digits=4):
    """value to `digits` significant digits (the page's data stays small);
    lists and dicts of them alike; anything else as it is."""
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0:
            return value if math.isfinite(value) else None
        return round(value, digits - 1 - math.floor(math.log10(abs(value))))
    if isinstance(value, list | tuple):
        return [rounded(item, digits) for item in value]
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    return value


def estimate(value):
    """A figure the results give as a number or as {"value", "ci95", ...}:
    {"value", "ci95"} (ci95 None when not given); None when absent."""
    if value is None:
        return None
    if isinstance(value, dict):
        found = value.get("value", value.get("rps"))
        return None if found is None else {"value": found, "ci95": value.get("ci95")}
    return {"value": value, "ci95": None}


def condition(record):
    """Where a record was measured: app, deployment, delay, route, clients, and
    the ratings route's sources (None for other routes)."""
    delay = record.get("db_delay_ms") or 0.0
    where = record["app"], record["deployment"], delay, record["route"], record["connections"]
    return (*where, record.get("fan_out"), record.get("upstream_delay"))


def capacities(data):
    """{condition: the capacity found there (see the module's docstring)}."""
    found = {}
    for record in data.get("capacity") or []:
        raw = record["capacity_rps"]
        found[condition(record)] = {**estimate(raw), "objective": raw.get("objective")}
    return found


def cpu(record):
    """{part: {"value", "ci95"}} µs per request, or None."""
    parts = record.get("cpu_us_per_request")
    return {part: estimate(value) for part, value in parts.items()} if parts else None


def interval(summary):
    """(kind, [low, high]) of a Peak's req/s: its 95% interval when the run
    computed one, else the min-max of its runs when there were several."""
    if summary.get("requests_per_s_ci95"):
        return "ci95", summary["requests_per_s_ci95"]
    if summary["runs"] > 1:
        return f"min-max of {summary['runs']} runs", [
            summary["requests_per_s_min"],
            summary["requests_per_s_max"],
        ]
    return None, None


def spectrum(points):
    """[[nines, ms], ...] from [[percentile, ms], ...]: nines is -log10(1 - p/100)
    (90 % is 1, 99.9 % is 3), the x of HdrHistogram's percentile plot, which
    rounds without turning 99.9997 % into 100 %. 0 % and 100 % are left out."""
    return [[-math.log10(1 - p / 100), ms] for p, ms in points if 0 < p < 100]


def named(latency):
    """The [percentile, ms] pairs of a latency summary's p50, p99.9, ... keys."""
    return [[float(key[1:]), ms] for key, ms in latency.items() if re.fullmatch(r"p[\d.]+", key)]


def started_as(record):
    """The start of an app a record belongs to (bench/report/tables.py
    started_as, on the JSON form)."""
    deployment = record.get("configuration") or record["deployment"]
    sources = record.get("fan_out"), record.get("upstream_delay")
    return record["app"], deployment, record.get("db_delay_ms") or 0.0, *sources


def located(record, clients, rate=None):
    """A cell's dimensions (DIMS)."""
    return {"delay": record.get("db_delay_ms") or 0.0, "clients": clients, "rate": rate}


def sources_words(record):
    """The ratings route's condition, for display beside the deployment."""
    if not record.get("fan_out"):
        return ""
    return f", fan-out {record['fan_out']} x {record['upstream_delay']}"


def common(record, budgets):
    """What closed- and open-loop cells share."""
    return {
        "app": record["app"],
        "deployment": record["deployment"] + sources_words(record),
        "configuration": record.get("configuration"),
        "route": record["route"],
        "pss_mib": record.get("pss_mib"),
        "budget": budgets.get(started_as(record)),
        "capacity": None,
        "cpu_us": cpu(record),
    }


def closed_cell(peak, budgets):
    """A wrk peak (bench/records.py Peak) as a cell."""
    summary = peak["summary"]
    kind, low_high = interval(summary)
    held = [run["connections_held"] for run in peak["runs"] if run.get("connections_held")]
    return {
        **common(peak, budgets),
        "at": located(peak, peak["connections"]),
        "rps": summary["requests_per_s"],
        "interval": low_high,
        "interval_kind": kind,
        "runs": summary["runs"],
        "latency": summary["latency_ms"],
        "spectrum": spectrum(named(summary["latency_ms"])),
        "errors": summary["socket_errors"] + summary["non_2xx"],
        "held": max(held, default=None),
    }


def open_cell(rate, budgets):
    """An open-loop run (bench/records.py Rate) as a cell: latency from each
    request's due time, and its HdrHistogram spectrum."""
    report = rate["report"]
    return {
        **common(rate, budgets),
        "at": located(rate, report.get("connections"), rate["rate"]),
        "rps": report.get("achieved_rate"),
        "interval": None,
        "interval_kind": None,
        "runs": 1,
        "latency": report.get("latency_ms") or {},
        "spectrum": spectrum(report.get("spectrum") or named(report.get("latency_ms") or {})),
        "errors": (report.get("sent") or 0) - (report.get("ok") or 0),
        "held": None,
    }


def past_capacity(found):
    """Where a record was measured: an Overload's, a Spike's, a Profile's
    (its deployment named as the cells name theirs, the sources beside)."""
    return {
        "app": found["app"],
        "deployment": found["deployment"] + sources_words(found),
        "route": found["route"],
        "delay": found.get("db_delay_ms") or 0.0,
        "clients": found.get("connections"),
    }


def overload_point(found):
    """One multiple of an app's capacity offered (bench/records.py Overload)."""
    return {
        **past_capacity(found),
        "multiple": found["multiple"],
        "capacity": found["capacity_rps"],
        "offered": found["offered_rps"],
        "goodput": estimate(found["goodput_rps"]),
        "late": found["late_rps"],
        "refused": found["refused_rps"],
        "errors": sum((found.get("errors_rps") or {}).values()),
        "refusal_ms": found.get("refusal_ms"),
        "kept_schedule": found.get("kept_schedule"),
    }


def profile_view(found, name):
    """Where an app's CPU went (bench/records.py Profile): its CPU per
    request by layer, its samples, and its flame graph's file beside the
    run's JSON (name: its stem)."""
    return {
        **past_capacity(found),
        "rate": found["rate"],
        "cpu_us": (found.get("cpu_us_per_request") or {}).get("app"),
        "layers": found.get("layers_us") or {},
        "samples": found["sampled"]["samples"],
        "flame": flame.file_name(name, found),
    }


def spike_view(found):
    """A spike and the recovery (bench/records.py Spike): each second of the
    schedule with the median over the runs of its p99, goodput and 503s."""
    phases = found["phases"]
    return {
        **past_capacity(found),
        "capacity": found["capacity_rps"],
        "phases": [f"{phase['multiple']:g}x for {phase['seconds']:g} s" for phase in phases],
        "spike_start": sum(phase["seconds"] for phase in phases[: found["spike"]]),
        "spike_end": found["spike_end_s"],
        "recovery": estimate(found["recovery_s"]),
        "goodput": [estimate(phase) for phase in found["goodput_rps"]],
        "seconds": [
            {
                "second": row["second"],
                "rate": row["rate"],
                "p99": median(row["p99_ms"]),
                "good": median(row["good"]),
                "refused": median(row["refused"]),
            }
            for row in found["per_second"]
        ],
    }


@functools.cache
def project_apps():
    """The apps of this project and its variants, whatever APPS_PATH holds."""
    folders = [ROOT, *([apps.VARIANTS] if apps.VARIANTS.is_dir() else [])]
    return frozenset(apps.scan(folders))


def compares_the_projects_apps(data):
    """Whether every app the run measured is one of the project's (a copy,
    "flask#2", as its app): "your conditions" answer from such a run only,
    not from one of the migration's steps or an app kept elsewhere."""
    return all(app["app"].partition("#")[0] in project_apps() for app in data["apps"])


def facts(data):
    """The run's command, commit and machine, and the settings it ran with."""
    environment = data["environment"]
    return {
        "command": data["command"],
        "date": environment.get("date"),
        "commit": environment.get("git_commit"),
        "dirty": environment.get("git_dirty"),
        "machine": f"{environment.get('cpu_count')} x {environment.get('cpu_model')}",
        "os": environment.get("os"),
        "python": environment.get("python"),
        "wrk": environment.get("wrk"),
        "load": data.get("wrk"),
        "database": data.get("database"),
        "delay_proxy": data.get("delay_proxy"),
        "pinning": data.get("pinning"),
        "generator": data.get("generator"),
    }


def view(data, name, title=None, superseded=None):
    """The page's view of a run from its JSON form (a dict): name is its file's
    stem, title the heading that lists it (docs/results.md), superseded the
    heading that marks it superseded, or None."""
    apps = data["apps"]
    budgets = {started_as(app): app.get("db_connections") for app in apps}
    found = capacities(data)
    cells = []
    for peak in data.get("measurements") or []:
        cells.append({**closed_cell(peak, budgets), "capacity": found.get(condition(peak))})
    cells += [open_cell(rate, budgets) for rate in data.get("openloop") or []]
    routes = {cell["route"] for cell in cells}  # in ROUTES' order: a route not there, last
    return rounded(
        {
            "id": name,
            "title": title or name,
            "superseded": superseded,
            "project": compares_the_projects_apps(data),
            "facts": facts(data),
            "apps": [{key: app.get(key) for key in APP_FIELDS} for app in apps],
            "routes": sorted(
                routes, key=lambda route: list(ROUTES).index(route) if route in ROUTES else 99
            ),
            "cells": cells,
            "overload": [overload_point(found) for found in data.get("overload") or []],
            "spikes": [spike_view(found) for found in data.get("spike") or []],
            "profiles": [profile_view(found, name) for found in data.get("profiles") or []],
            "ratios": data.get("ratios") or [],
            "noise_floor": estimate((data.get("noise_floor") or [None])[0]),
        }
    )
