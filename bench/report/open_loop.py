"""Latency at a fixed load (--rate): per deployment and route, every app at
every rate the open-loop generator offered."""

from bench.report.tables import delay_words, number, table
from bench.routes import ROUTES

HEADER = [
    "route",
    "offered req/s",
    "app",
    "achieved",
    "success",
    "mean",
    "p50",
    "p90",
    "p95",
    "p99",
    "p99.9",
    "max",
    "rows added / 2xx",
]
PERCENTILES = ("mean", "p50", "p90", "p95", "p99", "p99.9", "max")


def row_cells(rate):
    report = rate.report
    latency = report["latency_ms"] or {}
    ledger = report.get("ledger")
    return [
        ROUTES[rate.route].label,
        f"{rate.rate:,g}",
        rate.app,
        f"{report['achieved_rate']:,.0f}",
        f"{report['success_rate']:.1%}",
        *[number(latency.get(key), "{:,.1f}") for key in PERCENTILES],
        f"{ledger['rows_added']} / {ledger['responses_2xx']}" if ledger else "-",
    ]


def open_loop_tables(results):
    """One table per deployment and database delay; [] without --rate."""
    rates = results.openloop
    generator = results.generator or {}
    order = {app.app: index for index, app in enumerate(results.apps)}
    lines = []
    for deployment, delay in dict.fromkeys((r.deployment, r.db_delay_ms) for r in rates):
        lines += [
            f"## Latency at a fixed load, {deployment} deployment{delay_words(delay, ', ')}",
            "",
            f"Open loop ({generator.get('version', 'bench.openloop')}): requests leave on a "
            "schedule, latency from each one's due time; success = 2xx / sent.",
            "",
        ]
        here = sorted(
            (r for r in rates if (r.deployment, r.db_delay_ms) == (deployment, delay)),
            key=lambda r: (list(ROUTES).index(r.route), r.rate, order[r.app]),
        )
        lines += [table(HEADER, [row_cells(rate) for rate in here]), ""]
    return lines
