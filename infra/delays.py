"""Delays as the commands write them: the delay proxy's --delay (bench/sut/
delay_proxy.py, ./benchmark.sh --db-delay) and the upstream's --delay
(upstream/, with an optional jitter), read in one place."""

import re
from dataclasses import dataclass

UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "": 1e-3}  # a bare number is milliseconds
_DELAY = r"\s*(\d+(?:\.\d*)?)\s*(us|ms|s|)\s*"


def parse_delay(text):
    """'5ms', '500us', '0.02s', '0', '1.5' (ms) -> seconds. ValueError if not a delay."""
    match = re.fullmatch(_DELAY, text)
    if not match:
        raise ValueError(f"not a delay: {text!r} (e.g. 0, 500us, 5ms, 0.02s)")
    return float(match[1]) * UNITS[match[2]]


@dataclass(frozen=True)
class Jittered:
    """A delay of `mean` seconds, give or take up to `jitter` (uniformly)."""

    mean: float
    jitter: float = 0.0

    @property
    def low(self):
        return max(0.0, self.mean - self.jitter)

    @property
    def high(self):
        return self.mean + self.jitter

    def __str__(self):
        """As it is written: 50ms, or 50ms~10ms."""
        text = _milliseconds(self.mean)
        return f"{text}~{_milliseconds(self.jitter)}" if self.jitter else text


def parse_jittered(text):
    """'50ms' or '50ms~10ms' (50 ms give or take 10, uniformly) -> Jittered.
    ValueError if either side is not a delay (parse_delay), or the jitter is
    larger than the delay (a delay below 0)."""
    mean, tilde, jitter = text.partition("~")
    if tilde and not jitter.strip():
        raise ValueError(f"no jitter after '~': {text!r} (e.g. 50ms~10ms)")
    value = Jittered(parse_delay(mean), parse_delay(jitter) if tilde else 0.0)
    if value.jitter > value.mean:
        raise ValueError(f"a jitter larger than its delay: {text!r}")
    return value


def _milliseconds(seconds):
    return f"{seconds * 1000:g}ms"
