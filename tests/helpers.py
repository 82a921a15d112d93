"""Small helpers the test modules share."""

import os

import pytest

from bench.stack import pgbouncer
from db import embedded
from tests.faults import behind_proxy
from tools.serve import AppNotStarted, running


def query(connection, sql, *params):
    """All rows of one statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def needs_pgbouncer():
    """Skip the test where PgBouncer is not installed; fail it in CI (.ci/run
    installs it)."""
    if not pgbouncer.binary():
        message = "no pgbouncer: apt-get install pgbouncer (.ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def serve(app, database_url, log_dir, **settings):
    """Start app; yield its Server once /health answers; stop it afterwards."""
    port = embedded.free_port()
    try:
        with running(app, port, database_url, log_dir / f"{app}-{port}.log", **settings) as server:
            if os.environ.get("TEST_PROXY"):  # the same suites, through nginx
                yield from behind_proxy(server, log_dir)
            else:
                yield server
    except AppNotStarted as error:
        pytest.fail(str(error))
