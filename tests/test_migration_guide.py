"""docs/migration.md cannot drift from the code or from the measurements.

Its conventions, checked here (fast: no server, no database):
- a fenced block right after a line "`path`:" appears verbatim in that file;
- a ```diff block (--- old, +++ new, hunks after @@ lines) is a piece of the
  real diff: each hunk's old side (context and - lines) appears verbatim in the
  old file, its new side (context and + lines) in the new one;
- every number quoted is a link to the committed results file it comes from,
  [2,117 req/s](results/2026-11-23-all-both.md), and appears in that file; for
  a benchmark report, in the report its JSON renders through bench.records
  (the figures as measured, not as once printed); a link whose text is
  `code`, the file's name, quotes nothing.
"""

import re

import pytest

from bench import records
from bench.report.markdown import markdown
from tools import ROOT

GUIDE = ROOT / "docs" / "migration.md"

FENCE = re.compile(r"^`([^`]+)`:\n```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DIFF = re.compile(r"^```diff\n(.*?)^```$", re.MULTILINE | re.DOTALL)
RESULT_LINK = re.compile(r"\[([^\]]+)\]\((results/[^)#]+)\)")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def guide():
    return GUIDE.read_text()


def linked_text(path):
    """What a link's numbers are checked against: a benchmark report's Markdown
    rendered from the JSON beside it (bench.records reads it), else the file."""
    saved = path.with_suffix(".json")
    try:
        results = records.load(saved)
    except (OSError, ValueError):
        return path.read_text()  # no JSON, or not a benchmark's (docs/examples')
    return markdown(results)


def numbers(text):
    """Every number in text as a float, thousands separators dropped."""
    return {float(number.replace(",", "")) for number in NUMBER.findall(text)}


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


def test_diff_excerpts_are_the_diff():
    diffs = DIFF.findall(guide())
    assert len(diffs) >= 8
    for diff in diffs:
        old_path, new_path, sides = hunks(diff)
        old_file, new_file = (ROOT / old_path).read_text(), (ROOT / new_path).read_text()
        assert sides, diff
        for old, new in sides:
            assert old in old_file, f"not verbatim in {old_path}:\n{old}"
            assert new in new_file, f"not verbatim in {new_path}:\n{new}"


def test_quoted_numbers_are_in_the_results_they_link():
    links = RESULT_LINK.findall(guide())
    assert len(links) >= 10
    for text, target in links:
        if text.startswith("`"):
            continue  # the file's own name, not a figure from it
        path = GUIDE.parent / target
        assert path.is_file(), f"{target} is not committed"
        quoted = numbers(text)
        assert quoted, f"[{text}]({target}) quotes no number"
        missing = quoted - numbers(linked_text(path))
        assert not missing, f"[{text}]: {sorted(missing)} not in {target}"


@pytest.mark.parametrize(
    "diff, old, new",
    [
        ("--- a.py\n+++ b.py\n@@ -1 +1 @@\n x\n-y\n+z\n", "x\ny", "x\nz"),
        ("--- a.py\n+++ b.py\n-y\n+z\n@@ -9 +9 @@\n w\n", "y", "z"),
    ],
)
def test_hunks_reads_both_sides(diff, old, new):
    assert hunks(diff)[2][0] == (old, new)
