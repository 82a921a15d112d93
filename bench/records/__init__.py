"""The results of a run as typed records, their one JSON form, and the reader
of saved results (results/*.json, the committed docs/results/*.json).

The JSON keeps the field names of schema 1 (every run before these records),
so that both versions load; `schema` says which wrote a file. A generator's own
report (one wrk or open-loop run) stays the dict it printed: its keys are the
generator's, and the records keep it whole.
"""

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path

from bench.records.capacity import Capacity, Overload, Spike, Trial
from bench.records.runs import AppRun, Ceiling, Peak, Profile, Rate, Summary

__all__ = [
    "AppRun",
    "Capacity",
    "Ceiling",
    "Overload",
    "Peak",
    "Profile",
    "Rate",
    "Results",
    "Spike",
    "Summary",
    "Trial",
]
SCHEMA = 2  # 1: untyped dicts, the same fields; 2: written from these records


@dataclass
class Results:
    """One run: what was asked, what it ran on, and every record it measured."""

    command: str
    environment: dict  # date, commit, Python, machine, wrk (bench/sut/environment.py)
    wrk: dict  # threads, connections, duration_s, warmup_s, timeout_s, repeat, routes
    apps: list[AppRun]
    measurements: list[Peak] = field(default_factory=list)  # closed loop: none with --rate R
    database: dict | None = None  # the Postgres settings that matter to durability
    pgbench: list[Ceiling] = field(default_factory=list)
    openloop: list[Rate] = field(default_factory=list)
    pinning: dict | None = None
    generator: dict | None = None  # the open-loop generator's name, version, rates
    delay_proxy: str | None = None
    db_delays_ms: list = field(default_factory=lambda: [0.0])
    tuning: list[Trial] = field(default_factory=list)
    capacity: list[Capacity] = field(default_factory=list)  # --slo
    overload: list[Overload] = field(default_factory=list)  # --overload: past each capacity
    spike: list[Spike] = field(default_factory=list)  # --spike: a step load, and the recovery
    profiles: list[Profile] = field(default_factory=list)  # --profile: the rates, sampled
    objective: dict | None = None  # --slo's, or --tune's default: {"percentile", "ms"}
    # Each app's capacity to the baseline's, with its 95 % interval over rounds
    # (bench/intervals.py): {"app", "deployment", "baseline", "route",
    # "db_delay_ms", "connections", "metric", "value", "ci95", "measurable"}.
    ratios: list = field(default_factory=list)
    # The A/A ratios (an app named twice, arm 2 to arm 1), one per route,
    # connection count and database delay: {"app", "baseline", "route", ..., "value", "ci95"}.
    noise_floor: list = field(default_factory=list)
    upstreams: list = field(default_factory=list)  # the rating services a run started (sources.py)
    stopped: str | None = None  # why the run ended before its last step, or None
    schema: int = SCHEMA


def to_json(results):
    """The JSON text of results, in this harness's schema whatever it was read from."""
    return json.dumps({**dataclasses.asdict(results), "schema": SCHEMA}, indent=2) + "\n"


def record(cls, data):
    """cls (a record class above) from its JSON form, its nested records too.
    Raises ValueError on a field it does not know (a file from a newer harness)."""
    hints = typing.get_type_hints(cls)
    unknown = set(data) - set(hints)
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    values = {}
    for name, value in data.items():
        kind = hints[name]
        if dataclasses.is_dataclass(kind) and value is not None:
            value = record(kind, value)
        elif typing.get_origin(kind) is list and typing.get_args(kind):
            [item] = typing.get_args(kind)
            value = [record(item, one) for one in value or []]
        values[name] = value
    return cls(**values)


def from_json(text):
    """Results from the JSON a run saved (schema 1 or 2)."""
    data = json.loads(text)
    if "apps" not in data or "measurements" not in data:
        raise ValueError("not the results of a benchmark run")
    data = {key: value for key, value in data.items() if value is not None}
    results = record(Results, data)
    for app in results.apps:
        if app.configuration is None:  # written before apps stated it
            app.configuration = configuration_of(app.deployment)
    return results


def configuration_of(label):
    """The configuration in a deployment label of a file that predates
    AppRun.configuration: "tuned x2" and "tuned+nginx" are "tuned". The one
    place a label is read back, and only for such files."""
    return label.rsplit(" x", 1)[0].removesuffix("+nginx")


def load(path):
    """The Results saved at path."""
    return from_json(Path(path).read_text())
