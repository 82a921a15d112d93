"""The explorer's cells (bench/report/explorer/model.py): one per figure a run
measured, a closed-loop peak or an open-loop rate, located by its dimensions
(DIMS) and carrying req/s with its interval, latency percentiles and their
spectrum, memory, CPU per request, and the capacity found at its condition."""

import math
import re

# The dimensions a cell is located by: key -> (label, unit). A cell's value is
# None where the dimension does not apply (a closed-loop peak has no offered
# rate). Any other axis a run sweeps is one entry here and one in located().
DIMS = {
    "delay": ("database delay", "ms"),
    "clients": ("clients", ""),  # wrk's connections, or the open-loop generator's
    "rate": ("offered rate (open loop)", "req/s"),
}


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
    """A wrk peak (bench/records Peak) as a cell."""
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
    """An open-loop run (bench/records Rate) as a cell: latency from each
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
