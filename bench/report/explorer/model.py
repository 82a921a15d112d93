"""The explorer's view of one run: its JSON form (bench/records/ to_json)
reduced to what the page shows, in plain values the page's script reads.

A run is its facts (command, commit, machine), its configuration as read back
from the running servers (the AppRuns), and its cells: one per figure measured,
each located by its dimensions (cells.py DIMS: database delay, clients, offered rate)
and carrying req/s with its interval, latency percentiles, memory, and the
connections the app held.

The page shows what a run carries and nothing it does not. The fields below
are read when present and simply absent otherwise:
- the run's `capacity` (bench/records Capacity, --slo): per app, deployment,
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

from bench.intervals import median
from bench.report import flame
from bench.report.explorer.cells import (
    capacities,
    closed_cell,
    condition,
    estimate,
    open_cell,
    sources_words,
    started_as,
)
from bench.routes import ROUTES
from infra import ROOT, apps

APP_FIELDS = [  # what ran, as read back (bench/records AppRun), in the table's order
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
    """One multiple of an app's capacity offered (bench/records Overload)."""
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
    """Where an app's CPU went (bench/records Profile): its CPU per
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
    """A spike and the recovery (bench/records Spike): each second of the
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
