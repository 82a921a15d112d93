"""What a run is asked to do: the typed Options ./benchmark.sh's command line
becomes (bench/cli.py)."""

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Runs:
    """How every measured run loads an app: what the closed-loop peak, the
    open-loop rate, --tune's search and the pgbench ceiling read."""

    connections: list
    threads: int
    duration: int  # seconds of each measured run
    warmup: int  # seconds of the unmeasured run before it
    timeout: int
    repeat: int
    cpus: str | None = None  # --pin's load CPUs


@dataclass(frozen=True)
class Stack:
    """What each app runs as, and beside what: what bench/stack/targets.py
    reads to start the apps (or to label the --target already running)."""

    apps: list
    deployments: list  # deployment or server names (bench/stack/deployments.py)
    workers: int | None = None
    worker_threads: int | None = None  # threads per process, where the server has them
    db_connections: int | None = None  # each app's budget (None: the default, fitted)
    env: dict = field(default_factory=dict)
    port: int = 0
    proxy: str = "off"  # off, on (nginx in front of every app) or both
    pgbouncer: bool = False  # each app reaches Postgres through its own PgBouncer
    replicas: tuple = (1,)  # copies of each app behind nginx, each count a target
    target: str | None = None  # a server already running, measured instead
    cpus: str | None = None  # --pin's app CPUs
    db_cpus: str | None = None  # --pin's Postgres CPUs: the delay proxies' and PgBouncers'


@dataclass(frozen=True)
class Options:
    """A run, typed: how each run loads the apps (Runs), what it starts (Stack), and the
    switches of its modes, each read by the mode it belongs to."""

    routes: list
    runs: Runs
    stack: Stack
    database_url: str | None
    results_dir: str
    command: str
    pgbench: bool = True  # the ceiling (bench/modes/ceiling.py)
    rates: object = None  # --rate: None (closed loop only), "auto", or a list of req/s
    db_delays: tuple = (0.0,)  # --db-delay: seconds added per round trip, swept
    tune: bool = False  # --tune: search each app's configurations per condition

    @property
    def target(self):
        return self.stack.target

    @property
    def pinning(self):
        """--pin as the results record it: None when nothing is pinned."""
        cpus = {"app": self.stack.cpus, "db": self.stack.db_cpus, "load": self.runs.cpus}
        return cpus if any(cpus.values()) else None


def grouped(*, pin=None, **flat):
    """Options from the flat fields ./benchmark.sh's command line names (and
    the tests do): each goes to the group that reads it, --pin's CPU lists
    ({"app", "db", "load"}, or None) among them."""
    pin = pin or {}
    runs = {name: flat.pop(name) for name in RUN_FIELDS}
    stack = {name: flat.pop(name) for name in STACK_FIELDS if name in flat}
    return Options(
        runs=Runs(**runs, cpus=pin.get("load")),
        stack=Stack(**stack, cpus=pin.get("app"), db_cpus=pin.get("db")),
        **flat,
    )


RUN_FIELDS = ("connections", "threads", "duration", "warmup", "timeout", "repeat")
STACK_FIELDS = [f.name for f in dataclasses.fields(Stack) if f.name not in ("cpus", "db_cpus")]
FIELDS = [  # every field grouped() takes: what the command line sets
    *(f.name for f in dataclasses.fields(Options) if f.name not in ("runs", "stack")),
    "pin",
    *RUN_FIELDS,
    *STACK_FIELDS,
]
