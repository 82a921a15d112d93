"""The records of the searches (bench/records/): the capacity at a latency
objective, goodput past it, a spike and the recovery, and --tune's trials."""

from dataclasses import dataclass, field

from bench.records.runs import Sources


@dataclass
class Capacity(Sources):
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


@dataclass
class Overload(Sources):
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
    requests due in it; sources_in_flight, on the ratings route, the most
    ratings its sources were asked for at once in any of its runs."""

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
    sources_in_flight: int | None = None
    db_delay_ms: float = 0.0
    configuration: str | None = None  # --tune: the deployment chosen for "best"


@dataclass
class Spike(Sources):
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


@dataclass
class Trial(Sources):
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
