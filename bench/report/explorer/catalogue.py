"""The committed runs (docs/results/*.json) with what docs/results.md says of
each: the heading of the section that first links its report, and whether
that section is History (superseded). docs/results.md is the one place that
marks a run superseded; a run it does not link keeps its file's name."""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bench import records

HISTORY = "History:"  # how docs/results.md's heading of a superseded run begins
LINK = re.compile(r"\]\((?:\.\./)?results/([\w.-]+?)\.(?:json|md)\)")


@dataclass
class Entry:
    path: Path
    title: str
    superseded: str | None  # the History heading that marks it, or None


def is_run(path):
    """Whether a JSON file of docs/results/ is a benchmark run's (the others
    are docs/examples' measurements, in a shape of their own, or not JSON)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "measurements" in data


def headings(listing):
    """{run's file stem: heading of the first section of the listing (the
    text of docs/results.md) that links its report}."""
    found, heading = {}, ""
    for line in listing.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        for stem in LINK.findall(line):
            found.setdefault(stem, heading)
    return found


def entries(folder):
    """An Entry per benchmark run saved in folder (docs/results/), titled
    and marked from the listing beside it (docs/results.md), in name order."""
    folder = Path(folder)
    listing = folder.parent / f"{folder.name}.md"
    titles = headings(listing.read_text()) if listing.exists() else {}
    found = []
    # A run's files beside the others' (results/RUN.json), or in a folder of
    # its own (results/RUN/RUN.json).
    for path in sorted(folder.glob("*.json")) + sorted(folder.glob("*/*.json")):
        if not is_run(path):
            continue
        heading = titles.get(path.stem)
        old = heading is not None and heading.startswith(HISTORY)
        title = heading.removeprefix(HISTORY).replace("`", "").strip() if heading else path.stem
        found.append(Entry(path, title, heading if old else None))
    return found


def data(path):
    """A saved run's JSON form, through the records' reader: a schema 1 file
    comes back with schema 2's fields (and a file from a newer harness is
    refused, not half read)."""
    return json.loads(records.to_json(records.load(path)))
