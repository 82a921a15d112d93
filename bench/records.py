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

SCHEMA = 2  # 1: untyped dicts, the same fields; 2: written from these records


@dataclass
class Summary:
    """Several runs of one measurement: the median run's figures, min and max
    req/s, the errors of every run added up."""

    runs: int
    requests_per_s: float
    requests_per_s_min: float
    requests_per_s_max: float
    latency_ms: dict  # mean, p50, p75, p90, p99, p99.9, max
    requests: int
    socket_errors: int
    non_2xx: int

    @property
    def ok_per_s(self):
        """The median run's req/s answered 2xx, by every run's share of 2xx:
        what a closed loop got of the app where it also refused (an admission
        limit's 503s) or failed."""
        return self.requests_per_s * (1 - self.non_2xx / self.requests) if self.requests else 0.0


@dataclass
class Peak:
    """One app's closed-loop peak (wrk) on one route at one connection count."""

    app: str
    deployment: str
    connections: int
    route: str
    summary: Summary
    runs: list = field(default_factory=list)  # wrk's report of each repeat
    ledger: dict | None = None  # a POST's books, all repeats added up
    ledgers: list = field(default_factory=list)
    db_delay_ms: float = 0.0
    configuration: str | None = None  # --tune: the deployment chosen for "best"
    pss_mib: float | None = None  # the app's memory: the largest at the end of its runs
    # CPU µs per answered request, by part (bench/sut/cost.py PARTS), all runs added up
    cpu_us_per_request: dict | None = None
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Rate:
    """One app offered one request rate by the open-loop generator."""

    app: str
    deployment: str
    route: str
    rate: float
    report: dict  # the generator's report
    db_delay_ms: float = 0.0
    pss_mib: float | None = None  # the app's memory at the end of the run
    cpu_us_per_request: dict | None = None  # by part, as a Peak's
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Profile:
    """One app offered one rate by the open loop, its processes sampled
    meanwhile (--profile): where its CPU went, by layer (bench/layers.py)."""

    app: str
    deployment: str
    route: str
    rate: float
    report: dict  # the generator's report, "sampled" (bench/sut/sampler.py) moved out
    # rate_hz, samples, errors, behind, user_s, system_s, processes, stacks
    # (bench/sut/sampler.py; the stacks as bench/layers.py packed() keeps them)
    sampled: dict
    layers_us: dict | None  # CPU µs per request by layer, the kernel's included
    db_delay_ms: float = 0.0
    cpu_us_per_request: dict | None = None  # by part, as a Rate's: with the profiler running
    workers: list = field(default_factory=list)  # the pids of the server's processes sampled
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Capacity:
    """One app's capacity at a latency objective (--slo) on one route, at one
    connection count and database delay: the most requests/s the open loop
    offered with the objective's percentile within it and no error, found by
    bracketing and bisecting from the closed-loop peak (bench/modes/capacity/).

    capacity_rps: {"value", "ci95": [low, high] or None (one round), "objective":
    {"percentile", "ms"}}; steps: each rate offered, in order, with its rounds'
    reduced figures and the verdict of their merged histogram; bound: which bound
    binds ({"name", "why", "rps"}); connection_model: how the open loop held its
    connections ({"connections", "opened", "requests", "kept_alive"})."""

    app: str
    deployment: str
    route: str
    connections: int
    capacity_rps: dict
    steps: list = field(default_factory=list)
    peak_rps: float | None = None  # the closed-loop 2xx req/s the search started from
    bound: dict | None = None
    connection_model: dict | None = None
    step_seconds: int | None = None
    # The capacity offered again for longer (bench/modes/capacity/), stepped
    # down until it held: {"searched", "seconds", "held", "rate",
    # "percentile_ms", "runs"}; None in files from before it was made.
    confirmation: dict | None = None
    db_delay_ms: float = 0.0
    configuration: str | None = None  # --tune: the deployment chosen for "best"
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Overload:
    """One app offered a multiple of its own capacity (--overload, after
    --slo's search on the same route, connection count and database delay),
    by the open loop, --repeat runs in rotation (bench/modes/overload.py).

    Per second of the schedule, over its runs: goodput_rps, the 2xx answers
    within the objective (latency from each request's due time), {"value",
    "ci95"} over the runs; late_rps, the 2xx beyond it; refused_rps, the 503
    refusals; errors_rps, {kind: per second}: other_status (any other
    non-2xx), timeout, socket (reset or closed), not_sent (no connection
    within the timeout), connect (connections refused: attempts); refusal_ms,
    the refusals' {"p50", "p99"} (None: none); retry_after, the share of them
    that carried Retry-After; send_lag_p99_ms, the generator's own lateness,
    and kept_schedule, whether it stayed within the capacity search's rule;
    pace, the server's answers in each schedule's second half over the
    requests due in it."""

    app: str
    deployment: str
    route: str
    connections: int
    multiple: float
    capacity_rps: float  # the confirmed capacity the multiple is of
    offered_rps: float
    seconds: int  # each run's schedule
    runs: int
    goodput_rps: dict
    late_rps: float
    refused_rps: float
    errors_rps: dict
    refusal_ms: dict | None = None
    retry_after: float | None = None
    send_lag_p99_ms: float | None = None
    kept_schedule: bool = True
    pace: float | None = None
    db_delay_ms: float = 0.0
    configuration: str | None = None  # --tune: the deployment chosen for "best"
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Spike:
    """One app offered a step load of multiples of its own capacity (--spike,
    after --slo's search on the same route, connection count and database
    delay): phase after phase, --repeat runs in rotation (bench/modes/spike.py).

    phases: [{"seconds", "multiple", "rate"}] in order, the spike the one of
    index `spike`, which ends `spike_end_s` after the schedule's start;
    per_second: per second of the schedule (by each request's due time),
    {"second", "rate" (offered), and per run: "due", "good" (2xx within the
    objective), "refused" (503), "errors" (no answer), "other" (any other
    non-2xx), "p99_ms" (of the answers, any status; None: none)};
    recovery_s: {"value", "ci95", "runs"}: the seconds after the spike's end
    from which every second kept the objective to the schedule's end, each
    run's in runs (None: not recovered), the value the median run's (the
    higher middle one), None where it did not recover; goodput_rps,
    refused_rps, errors_rps: per phase, goodput {"value", "ci95"} over the
    runs, the others means."""

    app: str
    deployment: str
    route: str
    connections: int
    capacity_rps: float  # the confirmed capacity the multiples are of
    phases: list
    spike: int
    spike_end_s: int
    runs: int
    per_second: list
    recovery_s: dict
    goodput_rps: list
    refused_rps: list
    errors_rps: list
    send_lag_p99_ms: float | None = None
    kept_schedule: bool = True
    db_delay_ms: float = 0.0
    configuration: str | None = None  # --tune: the deployment chosen for "best"
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Trial:
    """--tune's search: one configuration of one app, one short run per route
    at one connection count and database delay; the curve the best is chosen from."""

    app: str
    deployment: str
    connections: int
    db_delay_ms: float
    requests_per_s: dict  # route -> req/s (closed loop)
    p99_ms: dict  # route -> p99 latency (closed loop)
    score: float  # the geometric mean of its capacities over the routes (before: of its req/s)
    chosen: bool = False
    rejected: str | None = None  # why it may not be chosen: it broke the latency objective
    capacity_rps: dict = field(default_factory=dict)  # route -> req/s at the objective
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


@dataclass
class Ceiling:
    """pgbench running one route's SQL: the database's own ceiling."""

    route: str
    connections: int
    tps: float
    latency_ms: float | None
    failed: int
    clients: int
    command: str
    db_delay_ms: float = 0.0
    duration_s: float | None = None  # None: a run that gave pgbench wrk's duration
    transactions: int | None = None  # those it completed
    cpu: dict | None = None  # the CPU each part spent over the run (bench/sut/cost.py)
    # The floor: CPU µs per transaction of Postgres, pgbench ("generator") and
    # the delay proxy, the apps' cpu_us_per_request's parts
    cpu_us_per_transaction: dict | None = None


@dataclass
class AppRun:
    """What ran: one app in one deployment, read back from the running server."""

    app: str
    deployment: str
    status: str  # measured, or failed (with the reason)
    versions: dict = field(default_factory=dict)
    server: str | None = None
    note: str | None = None
    proxy: str | None = None  # nginx's version when behind it
    pgbouncer: str | None = None  # PgBouncer's version and pool when behind it (--pgbouncer)
    reason: str | None = None
    server_command: str | None = None
    workers: int | None = None  # worker processes (per copy), counted in its process tree
    threads: int | None = None  # per process, as configured
    in_flight: int | None = None  # requests it can have waiting on Postgres at once, all copies
    pool_size: int | None = None  # connections per process
    db_connections: int | None = None  # the app's budget (--db-connections)
    worker_class: str | None = None  # gunicorn's, as its log states it
    os_threads: int | None = None  # the most OS threads a worker ran, after a run
    differs: str | None = None  # where what ran is not what was asked
    settings: dict = field(default_factory=dict)
    log: str | None = None
    db_delay_ms: float = 0.0
    pss_rest_mib: float | None = None  # its memory once started and verified, before any load
    replicas: int = 1  # copies of the server behind nginx (--replicas); workers are per copy
    # Its deployment's configuration: article, tuned, a --tune candidate or a
    # server's name; `deployment` adds the variant (+nginx, xN) for display.
    configuration: str | None = None
    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms
    calls_out: str | None = None  # with sources: how it asks them, sequential or concurrent

    @property
    def label(self):
        return f"{self.app} ({self.deployment})"

    @property
    def nginx(self):
        """Whether nginx stood in front of it."""
        return self.proxy is not None


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
