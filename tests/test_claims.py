"""The claims mechanism (tests/claims.py) on a copy of a committed result:
a claim holds while its cell says what it quotes, and fails when one cell of
the JSON changes; a path that names no single cell is refused."""

import json
import shutil

import pytest

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
