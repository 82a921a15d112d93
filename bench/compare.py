"""Two or more saved runs side by side: each app's ratio to the baseline per
deployment and route, and how far the runs disagree.

    .venv/bin/python -m bench.compare results/A.json results/B.json

For checking that a result reproduces: rerun the same command, compare.
"""

import sys

from bench import records
from bench.report.tables import ratio_rows, table
from bench.routes import ROUTES


def ratios(results):
    """{(deployment, connections, route, app): ratio to the baseline} of Results."""
    found = {}
    keys = dict.fromkeys((p.deployment, p.connections) for p in results.measurements)
    for deployment, connections in keys:
        peaks = [
            p
            for p in results.measurements
            if (p.deployment, p.connections) == (deployment, connections)
        ]
        apps = list(dict.fromkeys(p.app for p in peaks))
        routes = list(dict.fromkeys(p.route for p in peaks))
        for row in ratio_rows(peaks, [], apps, routes):
            for app, ratio in row["ratio"].items():
                if ratio is not None:
                    found[(deployment, connections, row["route"], app)] = ratio
    return found


def disagreement(values):
    """The largest distance of a run's ratio from the runs' mean, as a fraction."""
    mean = sum(values) / len(values)
    return max(abs(value - mean) for value in values) / mean


def compare(paths):
    """Markdown: one row per ratio, one column per run, and the disagreement."""
    runs = [ratios(records.load(path)) for path in paths]
    keys = [key for key in runs[0] if all(key in run for run in runs[1:])]
    rows, worst = [], 0.0
    for deployment, connections, route, app in keys:
        values = [run[(deployment, connections, route, app)] for run in runs]
        spread = disagreement(values)
        worst = max(worst, spread)
        rows.append(
            [deployment, str(connections), ROUTES[route].label, app]
            + [f"{value:.2f}x" for value in values]
            + [f"±{spread:.0%}"]
        )
    header = ["deployment", "connections", "route", "ratio of"]
    header += [f"run {index + 1}" for index in range(len(runs))] + ["runs vs their mean"]
    return table(header, rows) + f"\n\nlargest disagreement: ±{worst:.0%}\n", worst


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    text, _ = compare(argv)
    print(text, end="")


if __name__ == "__main__":
    main(sys.argv[1:])
