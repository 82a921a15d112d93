"""tools/blocking_audit.py, the pre-migration audit: it finds every blocking
call planted in a fixture Flask app (tests/blocking_fixture/, each on a line
marked `# planted: KIND`) and nothing else there, nothing in the async apps'
views, and what docs/migration.md shows it printing for flask_app/."""

import re

import pytest

from tools import ROOT
from tools.blocking_audit import audit, main

FIXTURE = ROOT / "tests" / "blocking_fixture"
PLANTED = re.compile(r"# planted: ([a-z]+)$")


def planted():
    """{(path, line, kind)} of the fixture's marked lines."""
    return {
        (str(path.relative_to(ROOT)), number, match[1])
        for path in FIXTURE.glob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if (match := PLANTED.search(line))
    }


def findings(path):
    return [finding for found in audit(path).values() for finding in found]


@pytest.fixture(autouse=True)
def from_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the paths printed are the paths given


def test_every_planted_call_is_found_and_nothing_else():
    expected = planted()
    assert {kind for _, _, kind in expected} == {"database", "http", "sleep", "file", "subprocess"}
    found = {(f.path, f.line, f.kind) for f in findings("tests/blocking_fixture")}
    assert found == expected


def test_views_are_found_and_calls_followed_through_the_codebase():
    views = audit("tests/blocking_fixture")
    by_name = {view.label: found for view, found in views.items()}
    assert set(by_name) == {
        "nap", "remote", "store", "files", "process", "report", "waits", "blocks",
        "legacy",  # by add_url_rule(view_func=...), in another module
        "Items.get",  # a MethodView's
    }  # fmt: skip
    assert by_name["waits"] == []  # awaited, in a thread, or defined and not called
    chains = {(tuple(f.chain), f.call) for found in views.values() for f in found}
    assert (("report", "summarise", "count"), "connection.fetchval") in chains
    assert (("Items.get", "Items.load"), "open") in chains
    assert (("legacy", "notify"), "requests.post") in chains
    assert (("remote", "ask"), "client.get") in chains  # by its parameter's annotation


@pytest.mark.parametrize("app", ["quart_app", "sanic_app"])
def test_the_async_apps_views_block_nothing(app, capsys):
    views = audit(app)
    # health, the two films, the review, the ratings (whose calls out are awaited)
    assert len(views) == 5 and not any(views.values())
    assert main([app]) == 0
    assert capsys.readouterr().out == ""


def test_the_guide_shows_what_it_prints_for_flask_app(capsys):
    guide = (ROOT / "docs" / "migration.md").read_text()
    [shown] = re.findall(
        r"^\$ python -m tools.blocking_audit flask_app\n(.*?)^```$", guide, re.M | re.S
    )
    assert main(["flask_app"]) == 1
    printed = capsys.readouterr()
    assert printed.out == shown
    calls = len(shown.splitlines())
    assert printed.err == f"{calls} blocking calls in 5 of 5 views under flask_app\n"


def test_a_bad_path_or_file_is_said_in_a_sentence(tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == 2
    assert "no Python to read at" in capsys.readouterr().err
    assert main([]) == 2 and main(["-x"]) == 2
    assert main(["--help"]) == 0 and "python -m tools.blocking_audit" in capsys.readouterr().out
    (tmp_path / "broken.py").write_text("def view(:\n")
    (tmp_path / "fine.py").write_text("@app.get('/')\ndef view():\n    open('x')\n")
    assert main([str(tmp_path)]) == 1
    printed = capsys.readouterr()
    assert printed.out == f"{tmp_path}/fine.py:3 view -> open (file)\n"
    assert f"skipped {tmp_path}/broken.py" in printed.err
