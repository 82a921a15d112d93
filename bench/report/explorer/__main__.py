"""Build the explorer over every committed run: `python -m
bench.report.explorer docs/results` writes docs/results/index.html (its
superseded runs marked from docs/results.md); a folder of your own runs
works alike."""

import sys
from pathlib import Path

from bench.report.explorer import build


def main(arguments):
    """Build the page of each folder named; 2 on a missing or bad argument."""
    if not arguments:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for name in arguments:
        folder = Path(name)
        if not folder.is_dir():
            print(f"not a folder of results: {name}", file=sys.stderr)
            return 2
        print(f"wrote {build(folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
