"""Claims: a number the front page or the guide quotes, tied to the exact cell
of the committed result it comes from.

A claim is a Markdown link whose title names the cell, inline or by reference:

    [2,435 req/s](docs/results/RUN.json "capacity[app=flask,db_delay_ms=20].capacity_rps.value")
    [2,435][f20]   ...   [f20]: docs/results/RUN.json "capacity[app=flask].capacity_rps.value"

The title is a path into the JSON: keys joined by dots; a list followed by
[key=value,...] is narrowed to its one item whose fields equal those values
(numbers compared as numbers), or indexed by [N]. Two paths joined by " / "
are a ratio. The link's text holds the number as quoted; the cell, rounded to
the quoted number's decimals, must equal it. A rerun that changes a figure
fails the docs' tests until the text is changed with it.
"""

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from tests.quoted import FENCED, numbers, unit

INLINE = re.compile(r'\[([^\]]*)\]\(([^)\s]+\.json) "([^"]+)"\)')
REFERENCE = re.compile(r"\[([^\]]*)\]\[([^\]]+)\]")
DEFINITION = re.compile(r'^\[([^\]]+)\]: (\S+\.json) "([^"]+)"$', re.MULTILINE)
LOOSE = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")  # no title; not an image
UNTITLED = re.compile(r"^\[([^\]]+)\]: (\S+)$", re.MULTILINE)
STEP = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


class BadClaim(ValueError):
    """A claim whose path names no single cell, or whose cell is not what it quotes."""


def claims(markdown):
    """(text, JSON file as written, path) of every claim outside fenced code."""
    text = FENCED.sub("", markdown)
    defined = {label: (target, path) for label, target, path in DEFINITION.findall(text)}
    found = [(link, target, path) for link, target, path in INLINE.findall(text)]
    found += [
        (link, *defined[label]) for link, label in REFERENCE.findall(text) if label in defined
    ]
    return found


def equal(value, wanted):
    try:
        return Decimal(str(value)) == Decimal(wanted)
    except ArithmeticError:
        return str(value) == wanted


def select(data, path):
    """The value at path in data (see the module's docstring); BadClaim if
    the path names no single value."""
    value = data
    for key, narrowing in STEP.findall(path):
        if key:
            if not isinstance(value, dict) or key not in value:
                raise BadClaim(f"{path}: no {key!r} here")
            value = value[key]
        elif narrowing.isdigit():
            value = value[int(narrowing)]
        else:
            wanted = dict(pair.split("=", 1) for pair in narrowing.split(","))
            matches = [
                item
                for item in value
                if all(key in item and equal(item[key], want) for key, want in wanted.items())
            ]
            if len(matches) != 1:
                raise BadClaim(f"{path}: [{narrowing}] matches {len(matches)} items, not one")
            value = matches[0]
    return value


def cell(data, path):
    """The number path names: one cell, or the ratio of two ("A / B")."""
    parts = [select(data, part.strip()) for part in path.split(" / ")]
    if len(parts) == 2:
        return Decimal(str(parts[0])) / Decimal(str(parts[1]))
    [value] = parts
    return Decimal(str(value))


def check(text, target, path, folder):
    """Problems with one claim (empty: the text quotes its cell)."""
    quoted = numbers(text)
    if len(quoted) != 1:
        return [f"[{text}]: a claim quotes one number, not {len(quoted)}"]
    try:
        data = json.loads((Path(folder) / target).read_text())
        value = cell(data, path)
    except (OSError, ValueError, LookupError, ArithmeticError) as error:
        return [f"[{text}]({target}): {error}"]
    [number] = quoted
    if value.quantize(unit(number), rounding=ROUND_HALF_UP) != number:
        return [f"[{text}]({target} {path!r}): the cell holds {value}"]
    return []


def unclaimed(markdown):
    """Links to committed results whose text quotes a number but names no
    cell: on the pages held to claims, every number names its cell."""
    text = FENCED.sub("", markdown)
    untitled = {label: target for label, target in UNTITLED.findall(text)}
    loose = [f"[{link}]({target})" for link, target in LOOSE.findall(text) if "results/" in target]
    loose += [
        f"[{link}][{label}]"
        for link, label in REFERENCE.findall(text)
        if "results/" in untitled.get(label, "") and quotes(link)
    ]
    return [link for link in loose if quotes(link.split("](")[0].split("][")[0][1:])]


def quotes(text):
    """Whether a link's text quotes a number: a file's name in code (the
    report's, `2026-11-23-run.md`) does not."""
    return bool(numbers(text)) and not re.fullmatch(r"`[^`]*`", text)
