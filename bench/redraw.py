"""Redraw a saved run's charts beside its JSON, with this checkout's code:
`python -m bench.redraw docs/results/RUN.json ...` writes RUN.png,
RUN-sweep.png and the other charts its modes draw, next to RUN.json."""

import sys
from pathlib import Path

from bench import modes
from bench.records import load
from bench.report.charts import drawn


def main(paths):
    """Redraw each results file named; 2 on a missing argument."""
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for name in paths:
        path = Path(name)
        for chart in drawn(load(path), path.with_suffix(""), modes.charts()):
            print(f"drew {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
