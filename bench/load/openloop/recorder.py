"""What a run records: latencies in HdrHistograms, statuses, errors; and the
report built from them (see the package's docstring for what each figure means)."""

import collections
import math
import time

from hdrh.histogram import HdrHistogram

from . import ERROR_KINDS, NAME, REFUSED, version

PERCENTILES = (50, 90, 95, 99, 99.9)
# HdrHistogram range in microseconds: 1 us to 1 h, 3 significant digits.
HIGHEST_US = 3_600_000_000


def clock():
    """Seconds, to the microsecond: uvloop's loop.time() is whole milliseconds."""
    return time.perf_counter()


class Recorder:
    """Latencies from the intended send time, statuses and errors."""

    def __init__(self, start, duration, objective_ms=None):
        self.start = start
        self.objective_us = objective_ms * 1000 if objective_ms else None
        # The schedule's second half: the answers that end in it, against the
        # requests due in it, say whether the server kept pace (report's pace).
        self.half = (start + duration / 2, start + duration)
        self.answered_in_half = 0
        self.due_in_half = 0  # counted as released: a schedule's phases differ in rate
        self.latency = HdrHistogram(1, HIGHEST_US, 3)
        # Of the answers in latency: the 2xx (what goodput counts within an
        # objective) and the 503 refusals, which should be cheap and early.
        self.ok_latency = HdrHistogram(1, HIGHEST_US, 3)
        self.refused = HdrHistogram(1, HIGHEST_US, 3)
        self.retry_after = 0  # 503s that carried Retry-After
        self.service = HdrHistogram(1, HIGHEST_US, 3)  # from the actual send
        # When the generator released a request - when it was due: its own
        # lateness, before any wait for a connection.
        self.lag = HdrHistogram(1, HIGHEST_US, 3)
        self.per_second = collections.defaultdict(list)  # second -> latencies, ms
        # second -> how its due requests ended: due, ok (2xx), good (2xx within
        # the objective), refused (503), errors (no answer: timeout, socket,
        # not_sent). By due second, as the latencies are: a schedule's phases
        # (a spike, its recovery) show second by second.
        self.outcomes = collections.defaultdict(collections.Counter)
        self.statuses = collections.Counter()
        self.errors = collections.Counter()  # ERROR_KINDS
        self.sent_on_wire = 0
        self.opened = 0  # connections opened: one per request where the server closes each
        self.last_answer = start

    def released(self, intended, now):
        self.lag.record_value(max(1, round((now - intended) * 1e6)))
        self.outcomes[self.second(intended)]["due"] += 1
        self.due_in_half += intended >= self.half[0]

    def second(self, intended):
        return int(intended - self.start)

    def answered(self, status, intended, sent_at, now, retry_after=False):
        self.statuses[status] += 1
        self.last_answer = max(self.last_answer, now)
        self.answered_in_half += self.half[0] <= now < self.half[1]
        latency_us = max(1, round((now - intended) * 1e6))
        self.latency.record_value(latency_us)
        outcomes = self.outcomes[self.second(intended)]
        if 200 <= status < 300:
            self.ok_latency.record_value(latency_us)
            outcomes["ok"] += 1
            outcomes["good"] += self.objective_us is not None and latency_us <= self.objective_us
        elif status == REFUSED:
            self.refused.record_value(latency_us)
            self.retry_after += retry_after
            outcomes["refused"] += 1
        self.service.record_value(max(1, round((now - sent_at) * 1e6)))
        self.per_second[self.second(intended)].append(latency_us / 1000)

    def failed(self, kind, intended=None):
        """A request that ended without an answer (intended: when it was
        due), or a connection that failed to open (none was due)."""
        self.errors[kind] += 1
        if intended is not None:
            self.outcomes[self.second(intended)]["errors"] += 1


def percentiles_ms(histogram):
    if histogram.get_total_count() == 0:
        return None
    return {
        "mean": histogram.get_mean_value() / 1000,
        **{f"p{p:g}": histogram.get_value_at_percentile(p) / 1000 for p in PERCENTILES},
        "max": histogram.get_max_value() / 1000,
    }


def spectrum(histogram):
    """[[percentile, ms], ...] from p0 to p99.999 by halving the remainder, as
    HdrHistogram's percentile distribution (for a 1/(1-p) axis)."""
    if histogram.get_total_count() == 0:
        return []
    points, remainder = [], 100.0
    while remainder >= 0.001:
        p = 100.0 - remainder
        points.append([p, histogram.get_value_at_percentile(p) / 1000])
        remainder /= 2**0.5
    points.append([100.0, histogram.get_max_value() / 1000])
    return points


def series(recorder, duration):
    """Per second of the schedule (by due time): requests answered and their
    p99, ms; and how the requests due in it ended: due, ok (2xx), good (2xx
    within the objective; None without one), refused (503), errors (no
    answer). An answer of another status is due - ok - refused - errors."""
    rows = []
    for second in range(math.ceil(duration)):
        values = sorted(recorder.per_second.get(second, []))
        p99 = values[min(len(values) - 1, math.ceil(0.99 * len(values)) - 1)] if values else None
        outcomes = recorder.outcomes.get(second, {})
        counts = {key: outcomes.get(key, 0) for key in ("due", "ok", "good", "refused", "errors")}
        if recorder.objective_us is None:
            counts["good"] = None
        rows.append({"second": second, "count": len(values), "p99_ms": p99, **counts})
    return rows


def report(recorder, load, total, start):
    statuses = dict(sorted(recorder.statuses.items()))
    ok = sum(count for status, count in statuses.items() if 200 <= status < 300)
    answered = sum(statuses.values())
    elapsed = max(recorder.last_answer - start, 1e-9)
    return {
        "offered_rate": load.rate,
        "duration_s": load.duration,
        "phases": [[seconds, rate] for seconds, rate in load.phases],
        "connections": load.connections,
        "sent": total,
        "sent_on_wire": recorder.sent_on_wire,
        "connections_opened": recorder.opened,
        # Answers per second from the start to the last answer: below the
        # offered rate when the server fell behind (send_lag_ms tells
        # whether the generator did).
        "achieved_rate": answered / elapsed,
        "ok": ok,
        "non_2xx": answered - ok,
        "statuses": {str(status): count for status, count in statuses.items()},
        "errors": {kind: recorder.errors[kind] for kind in ERROR_KINDS},
        "success_rate": ok / total if total else 0.0,
        # Answers that ended in the schedule's second half, over the requests
        # due in it: about 1 where the server kept pace, below where its queue
        # grew (each second it falls behind lengthens every later wait).
        "pace": {"answered": recorder.answered_in_half, "due": recorder.due_in_half},
        "latency_ms": percentiles_ms(recorder.latency),
        "service_ms": percentiles_ms(recorder.service),
        "send_lag_ms": percentiles_ms(recorder.lag),
        "spectrum": spectrum(recorder.latency),
        # The latency histogram itself (HdrHistogram's compressed base64), so
        # that runs can be merged: percentiles are never averaged.
        "histogram": recorder.latency.encode().decode("ascii"),
        # The 2xx answers' alone (goodput: those within an objective), and
        # the 503 refusals' latency, with how many carried Retry-After.
        "ok_histogram": recorder.ok_latency.encode().decode("ascii"),
        "refused": {
            "count": recorder.statuses.get(REFUSED, 0),
            "retry_after": recorder.retry_after,
            "latency_ms": percentiles_ms(recorder.refused),
            "histogram": recorder.refused.encode().decode("ascii"),
        },
        "per_second": series(recorder, load.duration),
        "generator": {"name": NAME, "version": version()},
    }
