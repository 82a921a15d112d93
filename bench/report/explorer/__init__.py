"""The results explorer: one self-contained HTML page over one run or many,
which works offline from file:// (browsers refuse a file:// page's fetches,
so the data, the styles, the scripts and the chart library are all inlined).

write() is a run's page, written by every run beside its JSON; build() is
docs/results/index.html over every committed run (`python -m
bench.report.explorer docs/results`). The page's template, styles and plain
scripts are in static/ (no build step); the chart library, uPlot, in
vendor/uplot/ with its licence and where it came from."""

import json
import re
import sys
from pathlib import Path

from bench import records
from bench.layers import LAYERS
from bench.report import flame
from bench.report.explorer import catalogue, cells, model
from bench.routes import ROUTES

HERE = Path(__file__).resolve().parent
STYLES = ["vendor/uplot/uPlot.min.css", "static/explorer.css"]
SCRIPTS = [  # in the order they load: each uses those before it
    "vendor/uplot/uPlot.iife.min.js",
    "static/format.js",
    "static/data.js",
    "static/charts.js",
    "static/tables.js",
    "static/conditions.js",
    "static/explorer.js",
]
SLOT = re.compile(r"/\*(TITLE|STYLES|SCRIPTS|DATA)\*/")


def inlined(text):
    """text safe inside a <script> or <style> element: no "</" closes it early
    (JSON and the scripts only carry it inside strings, where \\/ is /)."""
    return text.replace("</", "<\\/")


def page(runs, title):
    """The page's HTML over runs (model.view() dicts)."""
    data = {
        "title": title,
        "dims": {key: {"label": label, "unit": unit} for key, (label, unit) in cells.DIMS.items()},
        "route_labels": {key: route.label for key, route in ROUTES.items()},
        "layers": {layer: flame.COLOURS[layer] for layer in LAYERS},  # in their order
        "runs": runs,
    }
    slots = {
        "TITLE": title.replace("&", "&amp;").replace("<", "&lt;"),
        "STYLES": "\n".join(inlined((HERE / name).read_text()) for name in STYLES),
        "SCRIPTS": "\n".join(inlined((HERE / name).read_text()) for name in SCRIPTS),
        "DATA": inlined(json.dumps(data, separators=(",", ":"))),
    }
    template = (HERE / "static" / "page.html").read_text()
    return SLOT.sub(lambda match: slots[match.group(1)], template)


def write(results, path, name=None):
    """The page of one run (a Results, or its JSON form as a dict) at path;
    returns path."""
    data = results if isinstance(results, dict) else json.loads(records.to_json(results))
    path = Path(path)
    run = model.view(data, name or path.stem)
    path.write_text(page([run], f"Benchmark {data['environment'].get('date', '')}"))
    return path


def build(folder, path=None):
    """The page over every run saved in folder (docs/results/), superseded
    ones marked, at path (default folder/index.html); returns path. A file
    the records' reader refuses is skipped, and said so on stderr."""
    folder, runs = Path(folder), []
    for entry in catalogue.entries(folder):
        try:
            data = catalogue.data(entry.path)
        except (ValueError, TypeError) as error:  # from a newer harness, or not a whole run
            print(f"skipped {entry.path}: {error}", file=sys.stderr)
            continue
        runs.append(model.view(data, entry.path.stem, entry.title, entry.superseded))
    path = Path(path or folder / "index.html")
    path.write_text(page(runs, "Benchmark results"))
    return path
