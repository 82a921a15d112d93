"""The parsers of ./benchmark.sh's option values (bench/arguments.py): each
returns the typed value, or raises argparse.ArgumentTypeError with what is
wrong in one sentence."""

import argparse
import re

from bench.stack.delay_proxy import parse_delay


def seconds(text):
    """'8', '8s', '2m', '1h' -> seconds."""
    match = re.fullmatch(r"(\d+)([smh]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 10s or 5m)")
    return int(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def positive_seconds(text):
    """A duration of at least a second: a run, or wrk's timeout, of 0 measures nothing."""
    value = seconds(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1s: {text!r}")
    return value


def int_list(text):
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not a list of positive numbers: {text!r}")
    return values


def choice_list(choices, all_word=None):
    def parse(text):
        names = [name.strip() for name in text.split(",") if name.strip()]
        if all_word and names == [all_word]:
            return list(choices)
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose from {', '.join(choices)}"
                + (f" or {all_word}" if all_word else "")
            )
        return names

    return parse


def rate_list(text):
    """--rate: 'auto', or a comma list of positive request rates per second."""
    if text.strip() == "auto":
        return "auto"
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not auto or a list of rates: {text!r}") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"rates must be positive: {text!r}")
    return values


def delay_list(text):
    """--db-delay: a comma list of delays per round trip, '0,1ms,5ms' -> seconds."""
    try:
        values = [parse_delay(part) for part in text.split(",")]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a delay is named twice: {text!r}")
    return tuple(values)


def pin_spec(text):
    parts = text.split(":")
    if len(parts) != 3 or not all(re.fullmatch(r"[0-9,-]+", part) for part in parts):
        raise argparse.ArgumentTypeError(
            f"--pin wants APP:DB:LOAD CPU lists, e.g. 0:1:1, not {text!r}"
        )
    return dict(zip(("app", "db", "load"), parts, strict=True))


# What the harness sets itself: given through --env, the report would state
# a configuration that did not run.
OWN_SETTINGS = {
    "WEB_WORKERS": "--workers",
    "POOL_MAX_SIZE": "--db-connections",
    "POOL_MIN_SIZE": "--db-connections",
}
GUNICORN_CONCURRENCY = re.compile(r"(^|\s)(--threads|--workers|-w|--worker-class|-k)\b")


def env_setting(text):
    name, equals, value = text.partition("=")
    if not equals or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
        raise argparse.ArgumentTypeError(f"--env wants NAME=VALUE, not {text!r}")
    if name in OWN_SETTINGS:
        raise argparse.ArgumentTypeError(f"--env {name}: use {OWN_SETTINGS[name]}")
    if name == "GUNICORN_CMD_ARGS" and GUNICORN_CONCURRENCY.search(value):
        raise argparse.ArgumentTypeError(
            "--env GUNICORN_CMD_ARGS: set processes and threads with --workers and "
            "--worker-threads (or --server), so that the report states what ran"
        )
    return name, value


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value
