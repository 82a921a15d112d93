"""The records of what ran and of each load (bench/records/): the apps as read
back, the closed-loop peaks, the open-loop rates and profiles, the pgbench
ceilings."""

from dataclasses import dataclass, field


@dataclass(kw_only=True)
class Sources:
    """The ratings route's condition, on every record measured under it (None
    on the other routes), given by name after the record's own fields."""

    fan_out: int | None = None  # --fan-out: the ratings route's sources per request
    upstream_delay: str | None = None  # --upstream-delay, as written: 50ms~10ms


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
class Peak(Sources):
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


@dataclass
class Rate(Sources):
    """One app offered one request rate by the open-loop generator."""

    app: str
    deployment: str
    route: str
    rate: float
    report: dict  # the generator's report
    db_delay_ms: float = 0.0
    pss_mib: float | None = None  # the app's memory at the end of the run
    cpu_us_per_request: dict | None = None  # by part, as a Peak's


@dataclass
class Profile(Sources):
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
class AppRun(Sources):
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
    calls_out: str | None = None  # with sources: how it asks them, sequential or concurrent

    @property
    def label(self):
        return f"{self.app} ({self.deployment})"

    @property
    def nginx(self):
        """Whether nginx stood in front of it."""
        return self.proxy is not None
