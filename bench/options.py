"""What a run is asked to do: the typed Options ./benchmark.sh's command line
becomes (bench/cli.py)."""

import dataclasses
import functools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rates:
    """--rate: the rates offered, req/s (given), or auto: fractions of each
    app's closed-loop peak (bench/load/openloop, AUTO_FRACTIONS)."""

    given: tuple = ()
    auto: bool = False

    def recorded(self):
        """As a result records it: "auto", or the list of rates."""
        return "auto" if self.auto else list(self.given)


@dataclass(frozen=True)
class Phase:
    """One phase of --spike's step load: this many seconds at this multiple of
    each app's own capacity."""

    seconds: int
    multiple: float

    def __str__(self):
        return f"{self.multiple:g}x:{self.seconds}s"


@dataclass(frozen=True)
class Objective:
    """A latency objective: this percentile of the latency (from each request's
    due time) within this many milliseconds (--slo)."""

    percentile: float
    ms: float

    def __str__(self):
        return f"p{self.percentile:g} <= {self.ms:g} ms"

    def as_dict(self):
        return {"percentile": self.percentile, "ms": self.ms}


@dataclass(frozen=True)
class Runs:
    """How every measured run loads an app: what the closed-loop peak, the
    open-loop rate, --tune's search and the pgbench ceiling read."""

    connections: list[int]
    threads: int
    duration: int  # seconds of each measured run
    warmup: int  # seconds of the unmeasured run before it
    timeout: int
    repeat: int
    cpus: str | None = None  # --pin's load CPUs
    # --write-token-file: the door's token, sent with every write (bench/write_token.py)
    write_token_file: str | None = None


@dataclass(frozen=True)
class SUT:
    """What each app runs as, and beside what: what bench/sut/targets.py
    reads to start the apps (or to label the --target already running)."""

    apps: list[str]
    deployments: list[str]  # deployment or server names (bench/sut/deployments.py)
    workers: int | None = None
    worker_threads: int | None = None  # threads per process, where the server has them
    db_connections: int | None = None  # each app's budget (None: the default, fitted)
    env: dict = field(default_factory=dict)
    port: int = 0
    proxy: str = "off"  # off, on (nginx in front of every app) or both
    pgbouncer: bool = False  # each app reaches Postgres through its own PgBouncer
    replicas: tuple[int, ...] = (1,)  # copies of each app behind nginx, each count a target
    target: str | None = None  # a server already running, measured instead
    cpus: str | None = None  # --pin's app CPUs
    db_cpus: str | None = None  # --pin's Postgres CPUs: the delay proxies' and PgBouncers'


@dataclass(frozen=True)
class Options:
    """A run, typed: how each run loads the apps (Runs), what it starts (SUT),
    and, in a class of this one that with_fields() makes (bench/modes:
    options_type()), the switches of its modes, each a field its mode declares
    (Mode.fields) and reads."""

    routes: list[str]  # bench/routes.py ROUTES' keys (None from the parser: not given)
    runs: Runs
    sut: SUT
    database_url: str | None
    results_dir: str
    command: str

    @property
    def target(self):
        return self.sut.target

    @property
    def pinning(self):
        """--pin as the results record it: None when nothing is pinned."""
        cpus = {"app": self.sut.cpus, "db": self.sut.db_cpus, "load": self.runs.cpus}
        return cpus if any(cpus.values()) else None


@functools.cache
def with_fields(fields):
    """The Options of a run whose modes declare fields: ((name, type, default),
    ...), in order; one class for the same fields."""
    declared = [(name, kind, dataclasses.field(default=default)) for name, kind, default in fields]
    return dataclasses.make_dataclass("Options", declared, bases=(Options,), frozen=True)


def grouped(kind, *, pin=None, **flat):
    """Options of class kind (bench/modes options_type(): with every mode's
    fields) from the flat fields ./benchmark.sh's command line names (and the
    tests do): each goes to the group that reads it, --pin's CPU lists
    ({"app", "db", "load"}, or None) among them, the modes' to their own."""
    pin = pin or {}
    runs = {name: flat.pop(name) for name in RUN_FIELDS if name in flat}
    sut = {name: flat.pop(name) for name in SUT_FIELDS if name in flat}
    return kind(
        runs=Runs(**runs, cpus=pin.get("load")),
        sut=SUT(**sut, cpus=pin.get("app"), db_cpus=pin.get("db")),
        **flat,
    )


RUN_FIELDS = (
    "connections", "threads", "duration", "warmup", "timeout", "repeat", "write_token_file"
)  # fmt: skip
SUT_FIELDS = [f.name for f in dataclasses.fields(SUT) if f.name not in ("cpus", "db_cpus")]


def flat_fields(kind):
    """Every field grouped(kind) takes: what the command line sets."""
    made = (f.name for f in dataclasses.fields(kind) if f.name not in ("runs", "sut"))
    return [*made, "pin", *RUN_FIELDS, *SUT_FIELDS]
