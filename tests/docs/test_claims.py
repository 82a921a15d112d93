"""The claims mechanism (tests/claims.py) on a copy of a committed result:
a claim holds while its cell says what it quotes, and fails when one cell of
the JSON changes; a path that names no single cell is refused."""

import json
import re
import shutil

import pytest

from bench import records
from bench.report import verdict
from tests import claims
from tools import ROOT

RUN = "2026-11-25-fair-pool-after-1.json"
FLASK_GEVENT_FILM = (
    "measurements[app=flask,deployment=gunicorn-gevent-psycogreen,route=film]"
    ".summary.requests_per_s"
)
RATIO = f"{FLASK_GEVENT_FILM.replace('flask', 'falcon')} / {FLASK_GEVENT_FILM}"
PAGE = f"""Flask under gevent did [2,586 req/s](results/{RUN} "{FLASK_GEVENT_FILM}"),
and [2,586][r] again, and Falcon [1.58x](results/{RUN} "{RATIO}").

[r]: results/{RUN} "{FLASK_GEVENT_FILM}"
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "results").mkdir()
    shutil.copy(ROOT / "docs" / "results" / RUN, tmp_path / "results" / RUN)
    return tmp_path


def problems(folder, page=PAGE):
    return [p for claim in claims.claims(page) for p in claims.check(*claim, folder)]


def test_a_claim_holds_while_its_cell_says_what_it_quotes(folder):
    assert len(claims.claims(PAGE)) == 3
    assert problems(folder) == []
    assert claims.unclaimed(PAGE) == []


def test_changing_one_cell_of_the_json_fails_the_claims_that_quote_it(folder):
    path = folder / "results" / RUN
    data = json.loads(path.read_text())
    peak = claims.select(data, FLASK_GEVENT_FILM.rsplit(".summary", 1)[0])
    peak["summary"]["requests_per_s"] += 100  # one cell
    path.write_text(json.dumps(data))
    assert len(problems(folder)) == 3  # two quotes of it, and the ratio over it


def test_a_path_that_names_no_single_cell_is_refused(folder):
    vague = f'[2,586](results/{RUN} "measurements[app=flask].summary.requests_per_s")'
    assert "matches 4 items, not one" in problems(folder, vague)[0]
    missing = f'[2,586](results/{RUN} "measurements[app=flask,route=film].nothing")'
    assert "matches 2 items" in problems(folder, missing)[0]


def test_a_quoted_number_without_its_cell_is_found():
    assert claims.unclaimed(f"did [2,586 req/s](results/{RUN})") == [
        f"[2,586 req/s](results/{RUN})"
    ]
    assert claims.unclaimed("[2,586][x]\n\n[x]: results/run.md\n") == ["[2,586][x]"]
    assert claims.unclaimed("[the report](results/run.md)") == []


README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "migration.md"
# The front page, the guide and its pages, and the results page: every
# number that links a committed result names its cell.
CLAIMED = [README, GUIDE, *sorted((ROOT / "docs" / "migration").glob("*.md"))]
CLAIMED += [ROOT / "docs" / "results.md"]
# The pages where the convention must be in use (a page that quotes no result
# passes with none).
AT_LEAST = dict.fromkeys(
    ["README.md", "migration.md", "alternatives.md", "fan-out.md", "results.md"], 10
)


@pytest.mark.parametrize("page", CLAIMED, ids=lambda page: page.name)
def test_every_number_the_pages_quote_from_a_result_is_its_cell(page):
    """Each page ties each number it quotes from a result to the JSON cell it
    comes from: each claim equals its cell after rounding, and no link to a
    result quotes a number without naming its cell (the exact-cell rule)."""
    text = page.read_text()
    found = claims.claims(text)
    assert len(found) >= AT_LEAST.get(page.name, 0), page.name  # the convention is in use
    broken = [p for claim in found for p in claims.check(*claim, page.parent)]
    assert not broken, "\n".join(broken)
    assert claims.unclaimed(text) == []


RULE = re.compile(r"^## The verdict: what to do first, for your service\n(.*?)^## ", re.S | re.M)


def test_each_branch_of_the_front_pages_rule_is_tied_to_a_cell():
    """README.md's decision rule: every row (a condition, the first move) names
    at least one measured cell, and the guide's "Should you migrate?" links
    the rule rather than repeat it."""
    text = README.read_text()
    [section] = RULE.findall(text)
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # not the header
    defined = {label for label, _, _ in claims.DEFINITION.findall(text)}
    assert len(rows) >= 5
    for row in rows:
        tied = [label for _, label in claims.REFERENCE.findall(row) if label in defined]
        assert tied, f"a branch with no measured cell: {row}"
    guide = GUIDE.read_text().split("## Should you migrate?", 1)[1].split("\n## ", 1)[0]
    assert "(../README.md#the-verdict-what-to-do-first-for-your-service)" in guide
    assert "| DB delay |" not in guide  # the numbers live on the front page, once


VERDICT = re.compile(
    r"<!-- verdict: python -m bench\.report\.verdict (\S+) -->\n(.*?)<!-- end verdict -->", re.S
)


def test_the_front_pages_verdict_table_is_its_runs_cells():
    """README.md's table is bench/report/verdict.py's rendering of the run it
    names, made again here: a rerun that changes a cell fails until the page
    is made again."""
    [(run, table)] = VERDICT.findall(README.read_text())
    assert table == verdict.verdict(records.load(ROOT / run))
    assert "no measurable difference" in table and "A/A floor at 20 ms" in table


def test_the_verdict_says_what_each_app_kept_past_its_capacity():
    """A run with --overload: a line per app and deployment, each multiple's
    goodput and refusals as its record holds them, and none for a run without."""
    results = records.load(ROOT / "docs/results/2026-11-28-overload-flask.json")
    lines = verdict.verdict(results).split("- Past capacity, ")[1:]
    assert len(lines) == len({(o.app, o.deployment) for o in results.overload}) == 2
    for found in results.overload:
        [line] = [line for line in lines if line.startswith(f"{found.app} ({found.deployment},")]
        goodput = f"{found.goodput_rps['value']:,.1f} ("
        assert f"at {found.multiple:g}x, {goodput}" in line, line
        assert f"and {found.refused_rps:,.1f} refused" in line, line
    [(run, _)] = VERDICT.findall(README.read_text())
    assert "Past capacity" not in verdict.verdict(records.load(ROOT / run))
