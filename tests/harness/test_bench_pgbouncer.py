"""./benchmark.sh --pgbouncer end to end: every app behind a PgBouncer of its
own passes verify-before-measure, loses no write, and Postgres never sees more
of one app than its PgBouncer's pool."""

import os

import pytest

from bench.records import load
from tests.helpers import benchmark, needs_pgbouncer
from tools.serve import APPS

pytestmark = pytest.mark.slow  # runs ./benchmark.sh, which starts every app

# More clients than the pool, and a budget below what each app holds in flight
# (Flask's and Falcon's 2 x 16 threads, Quart's and Sanic's pools): through
# PgBouncer they all run, sharing it.
CLIENTS, BUDGET = 32, 4
CORES = len(os.sched_getaffinity(0))


def test_every_app_behind_pgbouncer_is_measured_within_its_pool(database_url, tmp_path):
    needs_pgbouncer()
    path, _ = benchmark(
        tmp_path,
        *APPS,
        "--pgbouncer",
        "--db-connections",
        str(BUDGET),
        "-c",
        str(CLIENTS),
        "--routes",
        "film,review",
        # The tuned deployment with admission off: 32 clients on an event
        # loop's pool of 2 a worker queue past QUEUE_BUDGET, and its refusals
        # (503) would hide the answers this test is about (issue 42 has it).
        "--deployment",
        "unbounded",
        "--duration",
        "2s",
        "--warmup",
        "0",
        "--no-pgbench",
        "--database-url",
        database_url,
    )
    results = load(path)
    assert [(a.app, a.status) for a in results.apps] == [(app, "measured") for app in APPS]
    for app in results.apps:
        assert app.pgbouncer.startswith("PgBouncer ") and app.pgbouncer.endswith(
            f"a transaction pool of {BUDGET}"
        )
        assert app.settings["TRANSACTION_POOLING"] == "1"  # asyncpg: no statement cache
        assert app.workers == CORES, app  # one process per core, every app
    rows = {(m.app, m.route): m for m in results.measurements}
    assert set(rows) == {(app, route) for app in APPS for route in ("film", "review")}
    for (app, route), measured in rows.items():
        [run] = measured.runs
        assert measured.summary.requests > 0, (app, route)
        # Every request answered: wrk's closing its connections at the end of
        # the run cancels no query of Quart's or Sanic's, whose CancelRequest
        # PgBouncer could pass to another client (docs/deploy.md#pgbouncer).
        assert measured.summary.non_2xx == 0, (app, route, measured.summary)
        # Named through PgBouncer (it sets the client's application_name on the
        # server connection it lends), and never more than its pool.
        assert 1 <= run["connections_held"] <= BUDGET, (app, route, run)
        if route == "review":  # every 201 a row
            ledger = measured.ledger
            assert ledger["responses_2xx"] > 0 and 0 <= ledger["in_flight"] <= CLIENTS, ledger
    text = path.with_suffix(".md").read_text()
    assert text.count("through PgBouncer") == len(APPS)
