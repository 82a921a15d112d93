"""README.md is a front page, and the docs cannot drift from the repository.

Fast: no server, no database. Checked here:
- README.md stays short and holds the two commands and the article;
- every relative link in README.md and docs/*.md reaches a committed file and,
  for #anchors into Markdown, a heading of it (GitHub's slugs); every path in
  `code` under one of the repository's folders names a file or folder that is
  there (so a module that moves cannot leave the docs behind);
- the numbers README.md and docs/results.md quote are in the committed reports
  they link (the conventions are in tests/quoted.py).
"""

import re

import pytest

from tests.quoted import (
    derived_problems,
    links,
    unquoted_link_numbers,
    unquoted_prose_numbers,
    unquoted_table_numbers,
)
from tools import ROOT

README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("docs/migration/*.md"))]
ARTICLE = "https://hackernoon.com/3x-faster-than-flask-8e89bfbe8e4f"
ARTICLE_CODE = "https://github.com/pgjones/faster_than_flask_article"
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
CODE_PATH = re.compile(r"`([\w\-]+/[\w.\-/]*)`")
IGNORED = {line.strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
FOLDERS = {
    p.name for p in ROOT.iterdir() if p.is_dir() and p.name[0] != "." and p.name not in IGNORED
}


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown):
    """Every heading's anchor; a repeated heading gets -1, -2, as on GitHub."""
    seen, found = {}, set()
    for heading in HEADING.findall(FENCED.sub("", markdown)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_the_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.encode()) <= 12 * 1024, f"README.md is {len(text.encode())} bytes"
    for needed in ("./benchmark.sh quart", "./test.sh", ARTICLE, ARTICLE_CODE):
        assert needed in text, f"README.md lacks {needed}"


PROMISES = re.compile(
    r"when it lands|until it lands|until then|will land|a later issue|not yet (built|done)|TODO",
    re.IGNORECASE,
)


def test_no_page_promises_future_work():
    """The docs say what is, not what an issue may bring: no "when it lands"."""
    pages = PAGES
    promised = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in pages
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if PROMISES.search(line)
    ]
    assert not promised, "\n".join(promised)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_relative_links_resolve(page):
    text = page.read_text()
    broken = []
    for _, target, anchor in links(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:: not ours to check
        path = (page.parent / target) if target else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor[1:] not in anchors(path.read_text()):
            broken.append(f"{target}{anchor}: no such heading")
    assert not broken, f"{page.name}: {broken}"


def test_code_paths_exist():
    named = {
        (page.name, path)
        for page in PAGES
        for path in CODE_PATH.findall(page.read_text())
        if path.split("/")[0] in FOLDERS
    }
    assert len(named) >= 50  # the pages name the code they describe
    absent = sorted(f"{page}: {path}" for page, path in named if not (ROOT / path).exists())
    assert not absent, "\n".join(absent)


@pytest.mark.parametrize("page", [README, RESULTS], ids=lambda page: page.name)
def test_link_texts_quote_their_reports(page):
    assert not unquoted_link_numbers(page.read_text(), page.parent)


@pytest.mark.parametrize("page, at_least", [(README, 1), (RESULTS, 5)], ids=["README", "results"])
def test_tables_quote_their_sections_reports(page, at_least):
    checked, problems = unquoted_table_numbers(page.read_text(), page.parent)
    assert checked >= at_least  # the convention is in use, so this test tests something
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page, at_least", [(README, 1), (RESULTS, 7)], ids=["README", "results"])
def test_prose_quotes_the_reports_it_links(page, at_least):
    checked, problems = unquoted_prose_numbers(page.read_text(), page.parent)
    assert checked >= at_least
    assert not problems, "\n".join(problems)


def test_a_wrong_prose_number_is_caught(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.json").write_text('{"connections_held": 40, "rps": 568.2}')
    good = "Flask held all 40 connections, `--workers 2`, 568 req/s\n([JSON](results/run.json))."
    assert unquoted_prose_numbers(good, tmp_path) == (1, [])
    assert unquoted_prose_numbers(good.replace("40", "50"), tmp_path)[1]


def test_every_results_section_links_its_report_or_says_why_not():
    sections = RESULTS.read_text().split("\n## ")[1:]
    for section in sections:
        linked = any("results/" in target for _, target, _ in links(section))
        said = "no results file is committed" in " ".join(section.lower().split())
        assert linked or said, f"## {section.splitlines()[0]}: which report?"


@pytest.mark.parametrize(
    "heading, anchor",
    [
        (
            "When does async pay? Async against sync workers only (`9fe15e3`)",
            "when-does-async-pay-async-against-sync-workers-only-9fe15e3",
        ),
        ("Writes and retries", "writes-and-retries"),
        ("`GET /films/` and `year.gt`", "get-films-and-yeargt"),
    ],
)
def test_slug_follows_github(heading, anchor):
    assert slug(heading) == anchor


def test_repeated_headings_are_numbered():
    assert anchors("## Notes\n\n## Notes\n") == {"notes", "notes-1"}


def test_a_wrong_table_number_is_caught(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.md").write_text("| flask | 1,918 | 15.2 | 1.61x |\n")
    table = "| app | req/s | p99 |\n|---|---|---|\n| flask | 1,918 | 15 |"
    good = f"## Run\n[report](results/run.md)\n\n{table}"
    assert unquoted_table_numbers(good, tmp_path) == (1, [])
    bad = good.replace("1,918", "1,981")
    checked, problems = unquoted_table_numbers(bad, tmp_path)
    assert checked == 1 and "1981" in problems[0]


def test_a_wrong_link_number_is_caught(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.md").write_text("Quart 3,088 req/s, 1.61x\n")
    assert unquoted_link_numbers("[3,088 req/s (1.6x)](results/run.md)", tmp_path) == []
    assert unquoted_link_numbers("[3,088 req/s (1.60x)](results/run.md)", tmp_path)
    assert unquoted_link_numbers("[3,880 req/s](results/run.md)", tmp_path)


@pytest.mark.parametrize(
    "header, row, wrong",
    [
        (
            "| delay | Flask | Quart | Quart / Flask |",
            "| 20 ms | 56 / 2,607 | 835 / 245 | 14.9x |",
            "",
        ),
        (
            "| delay | Flask | Quart | Quart / Flask |",
            "| 20 ms | 56 / 2,607 | 835 / 245 | 9.4x |",
            "9.4x",
        ),
        ("| route | the article: Flask / Quart |", "| film | 330 / 1,160 (3.5x) |", ""),
        ("| route | the article: Flask / Quart |", "| film | 330 / 1,160 (3.6x) |", "3.6"),
    ],
)
def test_ratios_are_checked_by_arithmetic(header, row, wrong):
    _, problems = derived_problems(header, row)
    assert [wrong in problem for problem in problems] == ([True] if wrong else [])
