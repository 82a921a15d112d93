"""Redraw a saved run's charts beside its JSON, with the charts of this
checkout: `python -m bench.report.charts docs/results/RUN.json ...` writes
RUN.png, RUN-sweep.png and the others its modes draw, next to RUN.json."""

import sys
from pathlib import Path

from bench.records import load
from bench.report.charts import drawn


def main(paths):
    """Draw every chart of each results file named; 2 on a missing argument."""
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for name in paths:
        path = Path(name)
        for chart in drawn(load(path), path.with_suffix("")):
            print(f"drew {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
