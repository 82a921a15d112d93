"""docs/migration.md cannot drift from the code or from the measurements.

Its conventions, checked here (fast: no server, no database):
- a fenced block right after a line "`path`:" appears verbatim in that file;
  so an excerpt of a step's patch (`docs/migration/step1.patch`:) is in the
  patch, which tests/docs/test_migration_steps.py checks against quart_app/;
- a ```diff block with no such line (--- old, +++ new, hunks after @@ lines)
  is a piece of the real diff: each hunk's old side (context and - lines)
  appears verbatim in the old file, its new side (context and + lines) in the
  new one;
- every number quoted from a result is a link that names its cell
  (tests/claims.py; tests/docs/test_claims.py checks every page of the guide);
- no line is over 100 characters, and every #anchor names a heading.
"""

import re

import pytest

from tests.quoted import links, unquoted_link_numbers
from tools import ROOT

GUIDE = ROOT / "docs" / "migration.md"
# The guide and the pages it sends the reader to for what is beside its path
PAGES = [GUIDE, *sorted((ROOT / "docs" / "migration").glob("*.md"))]

FENCE = re.compile(r"^`([^`]+)`:\n```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DIFF = re.compile(r"^```diff\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def guide():
    """Every page of the guide, one after the other."""
    return "\n".join(page.read_text() for page in PAGES)


def hunks(diff):
    """(old file, new file, [(old side, new side)]) of a unified diff excerpt."""
    lines = diff.splitlines()
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ "), lines[:2]
    sides = []
    for hunk in re.split(r"^@@.*\n", "\n".join(lines[2:]) + "\n", flags=re.MULTILINE):
        if not hunk.strip():
            continue
        old, new = [], []
        for line in hunk.splitlines():
            mark, text = line[:1] or " ", line[1:]
            if mark in " -":
                old.append(text)
            if mark in " +":
                new.append(text)
        sides.append(("\n".join(old), "\n".join(new)))
    return lines[0][4:].strip(), lines[1][4:].strip(), sides


def test_the_readme_links_to_the_guide():
    assert "(docs/migration.md)" in (ROOT / "README.md").read_text()


def test_file_excerpts_are_the_code():
    excerpts = FENCE.findall(guide())
    assert len(excerpts) >= 8  # the convention is in use, so this test tests something
    for path, excerpt in excerpts:
        assert excerpt in (ROOT / path).read_text(), f"not verbatim in {path}:\n{excerpt}"


def test_every_step_is_quoted():
    quoted = {path for path, _ in FENCE.findall(guide())}
    for step in (1, 2, 3, 4):
        assert f"docs/migration/step{step}.patch" in quoted


def test_diff_excerpts_are_the_diff():
    excerpts = {excerpt for _, excerpt in FENCE.findall(guide())}
    diffs = [diff for diff in DIFF.findall(guide()) if diff not in excerpts]
    for diff in diffs:
        old_path, new_path, sides = hunks(diff)
        old_file, new_file = (ROOT / old_path).read_text(), (ROOT / new_path).read_text()
        assert sides, diff
        for old, new in sides:
            assert old in old_file, f"not verbatim in {old_path}:\n{old}"
            assert new in new_file, f"not verbatim in {new_path}:\n{new}"


def test_the_guide_reads_in_source():
    """Prose wrapped, tables kept narrow: no line over 100 characters (a
    link's definition, the path of the result cell it quotes, aside)."""
    definition = re.compile(r"^\[[^\]]+\]: \S+")
    long = [line for line in guide().splitlines() if len(line) > 100 and not definition.match(line)]
    assert not long, long


def test_quoted_numbers_are_in_the_results_they_link():
    """A link into results/ without a cell (its text `code`, a file's name)
    quotes nothing; one that quotes a number names its cell, which
    tests/docs/test_claims.py checks on every page of the guide."""
    for page in PAGES:
        problems = unquoted_link_numbers(page.read_text(), page.parent)
        assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "diff, old, new",
    [
        ("--- a.py\n+++ b.py\n@@ -1 +1 @@\n x\n-y\n+z\n", "x\ny", "x\nz"),
        ("--- a.py\n+++ b.py\n-y\n+z\n@@ -9 +9 @@\n w\n", "y", "z"),
    ],
)
def test_hunks_reads_both_sides(diff, old, new):
    assert hunks(diff)[2][0] == (old, new)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_links_within_the_guide_have_a_heading(page):
    def headings(path):
        return {slug(heading) for heading in re.findall(r"^#+ (.*)$", path.read_text(), re.M)}

    anchored = re.findall(r"\]\(([\w./-]*)#([^)]+)\)", page.read_text())
    assert anchored or page != GUIDE  # the guide links its own sections
    missing = [
        f"{target}#{anchor}"
        for target, anchor in anchored
        if not target.startswith("http")
        and anchor not in headings((page.parent / target) if target else page)
    ]
    assert not missing, missing


def test_reference_links_are_read():
    text = "[1,918][a] and [2][b], [3](results/c.md)\n\n[a]: results/a.md\n"
    found = sorted((link, target) for link, target, _ in links(text))
    assert found == [("1,918", "results/a.md"), ("3", "results/c.md")]


def test_the_guide_is_read_in_an_afternoon():
    """At most 500 lines: the decision, the steps, the traps; the rest has
    pages of its own (docs/migration/)."""
    assert len((ROOT / "docs" / "migration.md").read_text().splitlines()) <= 500
