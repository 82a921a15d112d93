"""docs/benchmark.md's options table names every option ./benchmark.sh's
parser has (bench/arguments.py), and no other: it cannot drift from --help."""

import re

from bench.arguments import parser
from tools import ROOT

DOC = ROOT / "docs" / "benchmark.md"


def documented():
    """The options the table's first column names: `--duration`, `-c`, ..."""
    text = DOC.read_text()
    table = text[text.index("## Options") : text.index("\n\n", text.index("| option |"))]
    firsts = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    return {flag for cell in firsts for flag in re.findall(r"`(-[-\w]+)", cell)}


def parsed():
    return {
        flag
        for action in parser()._actions  # argparse keeps them here, and --help reads them
        for flag in action.option_strings
        if flag not in ("-h", "--help")
    }


def test_every_option_of_the_parser_is_in_the_table_and_nothing_else():
    missing, stale = parsed() - documented(), documented() - parsed()
    assert not missing, f"not in docs/benchmark.md's options table: {sorted(missing)}"
    assert not stale, f"in the table, but no option of the parser: {sorted(stale)}"
