"""Numbers the docs quote, checked against the committed results they come from.

Shared by tests/docs/test_docs.py (README.md, docs/results.md) and
tests/docs/test_migration_guide.py (docs/migration.md). The conventions:
- a link whose text holds numbers, [2,117 req/s](results/2026-11-23-all-both.md)
  or [2,117][a] with a line "[a]: results/2026-11-23-all-both.md" (a reference,
  which keeps a table of links narrow), quotes them from the file it links
  (a link whose text is `code`, the file's name, quotes nothing);
- a section (from one "## " heading to the next) that links reports under
  docs/results/ takes every number in its tables' rows from those reports;
- a paragraph that links reports under docs/results/ takes the numbers of its
  prose (not of its `code` or its link targets) from those reports;
- a ratio in a table is checked by arithmetic where the table shows what it
  divides: in a column headed "A / B", each cell is column A's first number
  over column B's; in a cell "a / b / c (1.2x / 1.5x)", the ratios are b/a and
  c/a (within the rounding of the numbers shown).
A quoted number is found when a number of the file, rounded to the quoted
number's decimals, equals it: 2,607 quotes 2,606.8 and 1.6 quotes 1.62, but
1.60 does not quote 1.62. A benchmark report is read as the Markdown its JSON
renders through bench.records (the figures as measured, not as once printed).
"""

import functools
import re
from decimal import ROUND_HALF_UP, Decimal

from bench import records
from bench.modes import report as rendered

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]*)(#[^)\s]*)?\)")
REFERENCE_LINK = re.compile(r"\[([^\]]*)\]\[([^\]]+)\]")
DEFINITION = re.compile(r"^\[([^\]]+)\]: ([^\s#]+)(#\S*)?$", re.MULTILINE)
FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
SECTION = re.compile(r"^## ", re.MULTILINE)
SEPARATOR = re.compile(r"\|[\-:| ]+")
IN_CELL_RATIOS = re.compile(r"([\d,. /]+) \(([\d.x /]+)\)")
REPORT_SUFFIXES = (".md", ".json")


def numbers(text):
    """Every number in text, thousands separators dropped, as exact decimals."""
    return [Decimal(number.replace(",", "")) for number in NUMBER.findall(text)]


def unit(number):
    """The step of number's last decimal: 1 for 2,607, 0.01 for 1.62."""
    return Decimal(1).scaleb(number.as_tuple().exponent)


def missing(quoted_text, source_text):
    """The numbers of quoted_text that source_text does not hold, rounded or not."""
    return [
        quoted
        for quoted in numbers(quoted_text)
        if quoted not in rounded(source_text, unit(quoted))
    ]


@functools.cache
def rounded(source_text, step):
    """Every number of source_text rounded to step (a quoted number's last
    decimal), as a set: made once per report and step, since the docs look up
    hundreds of numbers in the same few reports."""
    return {value.quantize(step, rounding=ROUND_HALF_UP) for value in numbers(source_text)}


def divides_out(ratio, top, bottom):
    """Whether ratio can be top / bottom, each of the three rounded as shown."""
    low, high = ratio - unit(ratio) / 2, ratio + unit(ratio) / 2
    top_low, top_high = top - unit(top) / 2, top + unit(top) / 2
    bottom_low, bottom_high = bottom - unit(bottom) / 2, bottom + unit(bottom) / 2
    return top_low / bottom_high <= high and top_high / bottom_low >= low


def links(markdown):
    """(text, target, #anchor or "") of every link outside fenced code, inline
    or by reference (resolved by its definition line)."""
    text = FENCED.sub("", markdown)
    targets = {label: (target, anchor) for label, target, anchor in DEFINITION.findall(text)}
    return LINK.findall(text) + [
        (link, *targets[label]) for link, label in REFERENCE_LINK.findall(text) if label in targets
    ]


def sections(markdown):
    """The markdown split at its "## " headings (the text before the first is one too)."""
    bounds = [0, *(match.start() for match in SECTION.finditer(markdown)), len(markdown)]
    pieces = (markdown[a:b] for a, b in zip(bounds, bounds[1:], strict=False))
    return [piece for piece in pieces if piece.strip()]


def table_rows(section):
    """(header, row) for each body row of the section's tables."""
    lines = section.splitlines()
    separator = [bool(SEPARATOR.fullmatch(line)) for line in lines]
    found, header = [], ""
    for i, line in enumerate(lines):
        if not line.startswith("|") or separator[i]:
            continue
        if i + 1 < len(lines) and separator[i + 1]:
            header = line
        else:
            found.append((header, line))
    return found


def cells(row):
    """The cells of a table row, without the outer bars."""
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def reports(section, folder):
    """The committed reports (Markdown or JSON under */results/) the section links."""
    targets = [folder / target for _, target, _ in links(section) if "results/" in target]
    return [path for path in targets if path.suffix in REPORT_SUFFIXES]


def derived_problems(header, row):
    """(the row without its derived ratios, the ratios that do not divide out)."""
    names, values, problems = cells(header), cells(row), []
    for i, name in enumerate(names[: len(values)]):
        a, _, b = name.partition(" / ")
        if b and a in names and b in names:
            ratio, top, bottom = (numbers(values[names.index(n)]) for n in (name, a, b))
            if not (ratio and top and bottom and divides_out(ratio[0], top[0], bottom[0])):
                problems.append(f"{name}: {values[i]} is not {top[:1]} over {bottom[:1]}")
            values[i] = ""
    for i, value in enumerate(values):
        inside = IN_CELL_RATIOS.fullmatch(value)
        if not inside:
            continue
        quantities, ratios = numbers(inside[1]), numbers(inside[2])
        if len(ratios) == len(quantities) - 1:
            for quantity, ratio in zip(quantities[1:], ratios, strict=True):
                if not divides_out(ratio, quantity, quantities[0]):
                    problems.append(f"{value}: {ratio} is not {quantity} / {quantities[0]}")
            values[i] = inside[1]
    return "|".join(values), problems


@functools.cache
def source(path):
    """What a link's numbers are checked against: a benchmark report (.md) as
    the Markdown the JSON beside it renders, any other file as it is. Read
    once per test session: many links and sections quote the same report."""
    if path.suffix == ".md":
        try:
            return rendered(records.load(path.with_suffix(".json")))
        except (OSError, ValueError):
            pass  # no JSON, or not a benchmark's (docs/examples')
    return path.read_text()


def unquoted_link_numbers(markdown, folder):
    """["[text](target): numbers"] for each link quoting a number its report lacks."""
    problems = []
    for text, target, _ in links(markdown):
        if "results/" not in target or text.startswith("`") or not numbers(text):
            continue
        if not target.endswith(REPORT_SUFFIXES):
            continue  # a chart: its alt text describes it, quotes nothing
        path = folder / target
        if not path.is_file():
            problems.append(f"[{text}]({target}): not committed")
        elif absent := missing(text, source(path)):
            problems.append(f"[{text}]({target}): {[str(n) for n in absent]}")
    return problems


def unquoted_table_numbers(markdown, folder):
    """(sections checked, ["row: problem"] for each table number its reports lack)."""
    checked, problems = 0, []
    for section in sections(markdown):
        paths, rows = reports(section, folder), table_rows(section)
        if not paths or not rows:
            continue
        checked += 1
        missing_paths = [path for path in paths if not path.is_file()]
        problems += [f"{path}: not committed" for path in missing_paths]
        source_text = "\n".join(source(path) for path in paths if path not in missing_paths)
        for header, row in rows:
            row, wrong = derived_problems(header, row)
            problems += wrong
            if absent := missing(row, source_text):
                problems.append(f"{row[:60]}...: {[str(n) for n in absent]}")
    return checked, problems


def unquoted_prose_numbers(markdown, folder):
    """(paragraphs checked, ["paragraph: numbers"] for each prose number its reports lack)."""
    checked, problems = 0, []
    for paragraph in re.split(r"\n\s*\n", FENCED.sub("", markdown)):
        paths = reports(paragraph, folder)
        if paragraph.startswith("|") or not paths:
            continue
        checked += 1
        prose = re.sub(r"\]\([^)]*\)", "]", re.sub(r"`[^`]*`", "", DEFINITION.sub("", paragraph)))
        source_text = "\n".join(source(path) for path in paths if path.is_file())
        if absent := missing(prose, source_text):
            problems.append(f"{paragraph[:60]}...: {[str(n) for n in absent]}")
    return checked, problems
