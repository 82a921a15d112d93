"""The ratings route's sources in a run (--fan-out, --upstream-delay): the
project's rating service (upstream/, python -m upstream) started once per
upstream delay, on as many ports as the largest fan-out asks, and stopped
with it; each app started per fan-out, told of that many of its ports
(UPSTREAM_FANOUT) and of the fan-out's deadline (UPSTREAM_TIMEOUT, the
apps' default unless --env sets it). The service must never be the
bottleneck: its CPU is read around every run (bench/load/measure.py) and
the report says when it saturated (bench/modes/fan_out.py)."""

from dataclasses import dataclass

from bench.sut.processes import shown
from infra.delays import parse_jittered
from upstream.process import launched

DEFAULT_FAN_OUT = (3,)  # --routes ratings without --fan-out: compose's three sources
DEFAULT_UPSTREAM_DELAY = (parse_jittered("50ms~10ms"),)  # compose's, and the guide's
DEFAULT_TIMEOUT = 1.0  # UPSTREAM_TIMEOUT when --env does not set it: the apps' own default


@dataclass(frozen=True)
class FanOut:
    """One condition of the ratings route: `count` sources per request, each
    answering after `delay` (a Jittered), served by `upstream` (upstream/
    process.py Upstream: its URLs, its process, its stats())."""

    count: int
    delay: object
    upstream: object

    @property
    def urls(self):
        return self.upstream.urls[: self.count]

    @property
    def delay_text(self):
        """As it is written: 50ms, or 50ms~10ms."""
        return str(self.delay)

    def settings(self):
        """What an app started in this condition is told of its sources."""
        return {"UPSTREAM_FANOUT": ",".join(self.urls)}


def timeout(env):
    """The fan-out's deadline the apps run with, in seconds."""
    return float(env.get("UPSTREAM_TIMEOUT", DEFAULT_TIMEOUT))


def record(upstream, delay):
    """What the results keep of a rating service, read back before it stops:
    its command and pid, and its own totals (GET /stats)."""
    stats = upstream.stats()
    return {
        "delay": str(delay),
        "command": shown(upstream.process.args),  # no path of this machine
        "pid": upstream.process.pid,
        "ports": len(upstream.urls),
        "answered": stats["answered"],
        "cpu_us_per_answer": stats["cpu_us_per_answer"],
        "saturated_seconds": stats["saturated_seconds"],
        "most_in_flight": stats["most_in_flight"],  # ratings asked for at once, at most
        "most_connections": stats["most_connections"],
    }


def serving(exits, delay, ports, log):
    """The rating service at delay on `ports` free ports, stopped when exits close."""
    return exits.enter_context(launched([0] * ports, str(delay), log))
