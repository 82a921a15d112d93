"""The verdict on a step: whether its runs kept the objective, and the
figures of a run it needs (Reduced). A request that failed (an error, a
refusal, no answer) counts as one beyond the objective; the runs must have
kept pace, and the generator its schedule."""

import dataclasses
import math

# A step is invalid when the generator's own p99 lateness (due time to
# release) takes more than this share of the objective, and more than
# LATE_FLOOR_MS: the step would break on the generator's account. On the busy
# 2-core machine its p99 lateness is 1-10 ms, with stalls of 30-100 ms (and
# more) when other work holds both cores.
LATE = 0.5
LATE_FLOOR_MS = 5.0
PACE = 0.1  # the share of the second half's due requests a step may leave unanswered


@dataclasses.dataclass(frozen=True)
class Reduced:
    """What a step's verdict needs of one run: requests answered, failed,
    answered beyond the objective; and whether the generator kept its schedule."""

    answered: int
    failed: int  # sent and not answered 2xx: errors, refusals, no answer
    beyond: int  # 2xx answers beyond the objective
    late_ms: float  # the generator's p99 lateness
    valid: bool
    histogram: str  # the encoded latency histogram, to merge
    opened: int = 0  # connections the generator opened
    round_trips: float | None = None  # to Postgres per request, through a delay proxy
    service_ms: float | None = None  # mean latency from the actual send (not the due time)
    paced: int = 0  # answers that ended in the schedule's second half
    due: int = 0  # requests due in it (0: not reported, the pace not judged)
    sent: int = 0

    def __bool__(self):
        return True


def reduced(report, objective):
    """A run's Reduced against the objective."""
    answered = report["ok"] + report["non_2xx"]
    late = late_ms(report)
    return Reduced(
        answered=answered,
        sent=report["sent"],
        failed=report["sent"] - report["ok"],
        # The 2xx answers beyond it (the failed count apart, whatever their time).
        beyond=beyond(decoded(report.get("ok_histogram") or report["histogram"]), objective.ms),
        late_ms=late,
        valid=late <= allowed_late_ms(objective),
        histogram=report["histogram"],
        opened=report.get("connections_opened") or 0,
        round_trips=report.get("round_trips_per_request"),
        service_ms=(report.get("service_ms") or {}).get("mean"),
        paced=(report.get("pace") or {}).get("answered", 0),
        due=(report.get("pace") or {}).get("due", 0),
    )


def late_ms(report):
    """The generator's own p99 lateness in a run (due time to release)."""
    return (report.get("send_lag_ms") or {}).get("p99", 0.0)


def allowed_late_ms(objective):
    """The most of it a run may have and still be judged (LATE, LATE_FLOOR_MS)."""
    return max(LATE_FLOOR_MS, objective.ms * LATE)


def holds(runs, objective):
    """Whether the runs together kept the objective: every run valid, at most
    (100 - percentile) % of the requests missed it (a 2xx beyond it, or a
    failure: an error, a refusal, no answer), and pace kept."""
    requests = sum(run.sent for run in runs)
    if requests <= sum(run.failed for run in runs) or not all(run.valid for run in runs):
        return False
    allowed = math.floor(requests * (100 - objective.percentile) / 100 + 1e-9)
    missed = sum(run.beyond + run.failed for run in runs)
    return missed <= allowed and kept_pace(runs)


def kept_pace(runs):
    """Whether the runs' answers kept up with their schedules' second halves,
    within PACE and a request per run (where a request ends is a matter of
    microseconds at the half's edges)."""
    due = sum(run.due for run in runs)
    return sum(run.paced for run in runs) >= due * (1 - PACE) - len(runs)


def pace_of(runs):
    """The runs' answers in their second halves over the requests due in them
    (None where no run reported it)."""
    due = sum(run.due for run in runs)
    return sum(run.paced for run in runs) / due if due else None


def beyond(histogram, limit_ms):
    """How many of an HdrHistogram's values (microseconds) are beyond limit_ms."""
    return sum(
        item.count_at_value_iterated_to
        for item in histogram.get_recorded_iterator()
        if item.value_iterated_to > limit_ms * 1000
    )


def merged(encoded):
    """Encoded histograms added up (one HdrHistogram)."""
    total = decoded(encoded[0])
    for more in encoded[1:]:
        total.add(decoded(more))
    return total


def decoded(encoded):
    """An HdrHistogram from the generator's encoding. hdrh is an extra, which
    bench/run.py installs for the runs that need it: imported here, not at start."""
    from hdrh.histogram import HdrHistogram

    return HdrHistogram.decode(encoded)


def mean_of(values):
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else None
