"""The parsers of ./benchmark.sh's option values (bench/arguments.py): each
returns the typed value, or raises argparse.ArgumentTypeError with what is
wrong in one sentence. What depends on two options is bench/refusals.py's."""

import argparse
import math
import os
import re

from bench.load.openloop import MAX_RATE
from bench.options import Objective, Phase, Rates
from bench.sut.delay_proxy import parse_delay
from bench.sut.processes import cpu_set
from infra.delays import parse_jittered

Refused = argparse.ArgumentTypeError
MAX_SECONDS = 24 * 3600  # one run of a day at most: more is --repeat's
MAX_REPEAT = 1000
MAX_FAN_OUT = 32  # rating sources per request: ports of one upstream process
MAX_UPSTREAM_DELAY = 10.0  # seconds: far past any UPSTREAM_TIMEOUT worth measuring
MAX_MULTIPLE = 100  # --overload: 100x a capacity is past any queue worth measuring
MIN_DELAY = 1e-6  # the delay proxy's resolution: its --delay is written in ms, %g


def seconds(text):
    """'8', '8s', '2m', '1h' -> seconds, at most a day."""
    match = re.fullmatch(r"([0-9]+)([smh]?)", text.strip())
    if not match:
        raise Refused(f"not a duration: {text!r} (try 10s or 5m)")
    digits, unit = match.groups()
    # Digits counted first: int() refuses more than 4,300 of them with a ValueError.
    value = int(digits) if len(digits.lstrip("0")) <= 6 else MAX_SECONDS + 1
    value *= {"": 1, "s": 1, "m": 60, "h": 3600}[unit]
    if value > MAX_SECONDS:
        raise Refused(f"at most 24h: {text!r} (more runs: --repeat)")
    return value


def positive_seconds(text):
    """A duration of at least a second: a run, or wrk's timeout, of 0 measures nothing."""
    value = seconds(text)
    if value < 1:
        raise Refused(f"must be at least 1s: {text!r}")
    return value


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise Refused(f"not a positive number: {text!r}")
    return value


def repeats(text):
    """--repeat: at most MAX_REPEAT runs per figure. The run's plan lists every
    run before it starts; the least a run takes (1 s and the settling around
    it) times 1,000 is over half an hour per figure already."""
    value = positive(text)
    if value > MAX_REPEAT:
        raise Refused(f"at most {MAX_REPEAT:,} runs per figure: {text!r}")
    return value


def unique(values, text):
    """values, if none is named twice (it would be measured twice, under one name)."""
    if len(set(values)) != len(values):
        raise Refused(f"a value is named twice: {text!r}")
    return values


def int_list(text):
    """'20,64,256' -> [20, 64, 256]: positive, each once."""
    try:
        values = [positive(part) for part in text.split(",")]
    except Refused:
        raise Refused(f"not a list of positive numbers: {text!r}") from None
    return unique(values, text)


def choice_list(choices, all_word=None, every=None):
    """A comma list of choices; all_word alone stands for every (default: all of them)."""

    def parse(text):
        names = [name.strip() for name in text.split(",") if name.strip()]
        if all_word and names == [all_word]:
            return list(every or choices)
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            raise Refused(
                f"{text!r}: choose from {', '.join(choices)}"
                + (f" or {all_word}" if all_word else "")
            )
        return unique(names, text)

    return parse


def rate_list(text):
    """--rate: 'auto', or a comma list of request rates per second, each from 1
    to what one generator process can offer: its Rates."""
    if text.strip() == "auto":
        return Rates(auto=True)
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise Refused(f"not auto or a list of rates: {text!r}") from None
    if not all(1 <= value <= MAX_RATE for value in values):  # NaN fails both
        raise Refused(
            f"rates from 1 to {MAX_RATE:,} requests/s, what one generator process can "
            f"offer (bench/load/openloop): {text!r}"
        )
    return Rates(tuple(unique(values, text)))


def multiple_list(text):
    """--overload: '0.5,1,2' -> (0.5, 1.0, 2.0): multiples of each app's
    capacity, each once, above 0 and at most MAX_MULTIPLE."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise Refused(f"not a list of multiples of the capacity: {text!r}") from None
    if not all(0 < value <= MAX_MULTIPLE for value in values):  # NaN fails both
        raise Refused(f"multiples of the capacity above 0 and at most {MAX_MULTIPLE:g}: {text!r}")
    return tuple(unique(values, text))


def spike_phases(text):
    """--spike: '0.5x:4s,3x:2s,0.5x:6s' -> (Phase, ...): multiples as
    --overload's, whole seconds; the spike is the one phase of the highest
    multiple, and a phase after it is where the recovery is measured."""
    phases = []
    for part in text.split(","):
        multiple, colon, length = part.strip().partition(":")
        try:
            value = float(multiple.removesuffix("x")) if colon else math.nan
            phases.append(Phase(positive_seconds(length), value))
        except (ValueError, Refused):
            raise Refused(
                f"--spike wants MULTIPLEx:SECONDS,..., e.g. 0.5x:4s,3x:2s,0.5x:6s: {text!r}"
            ) from None
    if not all(0 < phase.multiple <= MAX_MULTIPLE for phase in phases):  # NaN fails both
        raise Refused(f"--spike's multiples above 0 and at most {MAX_MULTIPLE:g}: {text!r}")
    top = max(phase.multiple for phase in phases)
    highest = [index for index, phase in enumerate(phases) if phase.multiple == top]
    if len(highest) != 1 or highest[0] == len(phases) - 1:
        raise Refused(
            f"--spike: one phase of the highest multiple (the spike), and one after it "
            f"(the recovery): {text!r}"
        )
    return tuple(phases)


def parts_parsed(text, parse):
    """Each part of a comma list, parsed; refused with parse's own sentence."""
    try:
        return [parse(part) for part in text.split(",")]
    except ValueError as error:
        raise Refused(str(error)) from None


def delay_list(text):
    """--db-delay: a comma list of delays per round trip, '0,1ms,5ms' -> seconds."""
    values = parts_parsed(text, parse_delay)
    if not all(value == 0 or MIN_DELAY <= value <= MAX_SECONDS for value in values):
        raise Refused(f"each delay 0, or from 1us to 24h: {text!r}")
    return tuple(unique(values, text))


SLO_PERCENTILES = (50.0, 75.0, 90.0, 95.0, 99.0, 99.9)  # enough samples in a step of seconds


def slo(text):
    """--slo: '100ms' (the p99), 'p95:50ms', '1s' -> an Objective. The
    percentile one of SLO_PERCENTILES, the latency from 1 ms to the hour."""
    match = re.fullmatch(r"(?:p([0-9]+(?:\.[0-9]+)?):)?([0-9]+(?:\.[0-9]+)?)(ms|s)", text.strip())
    percentile = float(match.group(1)) if match and match.group(1) else 99.0
    if not match or percentile not in SLO_PERCENTILES:
        shown = ", ".join(f"p{p:g}" for p in SLO_PERCENTILES)
        raise Refused(f"--slo wants [pP:]LATENCY, e.g. 100ms or p95:50ms (P: {shown}): {text!r}")
    digits, unit = match.group(2), match.group(3)
    ms = float(digits) * (1000 if unit == "s" else 1) if len(digits) <= 12 else math.inf
    if not 1 <= ms <= 3_600_000:
        raise Refused(f"--slo's latency from 1 ms to 1 h: {text!r}")
    return Objective(percentile, ms)


def fan_out_list(text):
    """--fan-out: '1,3,10' -> (1, 3, 10): sources per request, each once."""
    values = int_list(text)
    if max(values) > MAX_FAN_OUT:
        raise Refused(f"at most {MAX_FAN_OUT} sources per request: {text!r}")
    return tuple(values)


def upstream_delay_list(text):
    """--upstream-delay: '10ms,50ms~10ms' -> (Jittered, ...) (infra/delays.py)."""
    values = parts_parsed(text, parse_jittered)
    if not all(value.high <= MAX_UPSTREAM_DELAY for value in values):
        raise Refused(f"each upstream delay at most {MAX_UPSTREAM_DELAY:g}s: {text!r}")
    return tuple(unique(values, text))


def pin_spec(text):
    """--pin APP:DB:LOAD -> {"app", "db", "load"}: taskset CPU lists, each of
    CPUs this process may run on."""
    parts = text.split(":")
    cpu_list = r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*"
    if len(parts) != 3 or not all(re.fullmatch(cpu_list, part) for part in parts):
        raise Refused(f"--pin wants APP:DB:LOAD CPU lists, e.g. 0:1:1, not {text!r}")
    available = os.sched_getaffinity(0)
    shown = ",".join(map(str, sorted(available)))
    for part in parts:
        # The ends first: cpu_set() would fill memory with 0-99999999999.
        if any(len(n) > 6 or int(n) not in available for n in re.findall("[0-9]+", part)):
            raise Refused(f"{text!r}: this process may run on CPUs {shown} only")
        if any(int(low) > int(high) for low, high in re.findall("([0-9]+)-([0-9]+)", part)):
            raise Refused(f"{text!r}: a range runs from low to high, e.g. 0-1")
        if not cpu_set(part) <= available:  # a range over a CPU it may not use
            raise Refused(f"{text!r}: this process may run on CPUs {shown} only")
    return dict(zip(("app", "db", "load"), parts, strict=True))


# What the harness sets itself: given through --env, the report would state
# a configuration that did not run, or the app would not answer where it looks.
OWN_SETTINGS = {
    "WEB_WORKERS": "--workers",
    "POOL_MAX_SIZE": "--db-connections",
    "POOL_MIN_SIZE": "--db-connections",
    "DATABASE_URL": "--database-url",
    "PORT": "--port",
    "UPSTREAM_FANOUT": "--fan-out",
}
GUNICORN_CONCURRENCY = re.compile(r"(^|\s)(--threads|--workers|-w|--worker-class|-k)\b")


def env_setting(text):
    name, equals, value = text.partition("=")
    if not equals or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name) or "\0" in value:
        raise Refused(f"--env wants NAME=VALUE, not {text!r}")
    if name in OWN_SETTINGS:
        raise Refused(f"--env {name}: use {OWN_SETTINGS[name]}")
    if name == "GUNICORN_CMD_ARGS" and GUNICORN_CONCURRENCY.search(value):
        raise Refused(
            "--env GUNICORN_CMD_ARGS: set processes and threads with --workers and "
            "--worker-threads (or --server), so that the report states what ran"
        )
    return name, value
