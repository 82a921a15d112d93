"""A part between the clients and the database killed under a load of
reviews: PgBouncer in front of Postgres, or one of two copies of an app
behind nginx. Every app under its production server, on the test database;
each load's writers send an Idempotency-Key with every review and send it
again after a 503, as the contract tells a client to, and the ledger holds
(tests/faults.py: every key one review, the one its 201 named)."""

import contextlib
import os
import signal
import time
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest

from bench.sut.pgbouncer import Bouncer
from common import contract
from db.embedded import free_port
from db.roles import app_url
from tests.faults import Load, assert_ledger_holds, get, nginx, wait_for
from tests.helpers import needs_pgbouncer, serve
from tests.reliability.test_faults import BOUND, CLIENTS, TIMEOUTS, port_of, query_none
from tools import proxy
from tools.serve import APPS, running

pytestmark = pytest.mark.slow  # the apps, PgBouncer, nginx

# The apps' password at PgBouncer, where the test database's role has none (the
# embedded Postgres checks none): PgBouncer started again takes the same one.
PASSWORD = "pgbouncer-again"


def with_password(url):
    parts = urlsplit(url)
    if parts.password:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user}:{PASSWORD}@{host}"))


def kill(process):
    """SIGKILL to the process's group (a crash, the OOM killer): nothing of it
    closes its connections cleanly or answers what it has started."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.parametrize("app", APPS)
def test_pgbouncer_killed_for_2_s_is_503_and_recovered_from(
    app, database_url, db, tmp_path, record_property
):
    """While PgBouncer is gone every request is a 503 in bounded time, never a
    500, never a hang; once it is back on its port the app answers again by
    itself, and each review is stored once, with the id its 201 named."""
    needs_pgbouncer()
    url = with_password(app_url(database_url))
    settings = {"web_workers": 2, "transaction_pooling": 1, **TIMEOUTS}
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(tmp_path / "pgbouncer.log", "w"))
        bouncer = stack.enter_context(Bouncer(url, log))
        server = next(
            stack.enter_context(contextlib.closing(serve(app, bouncer.url, tmp_path, **settings)))
        )
        port = port_of(server)
        with Load(port, clients=0, keyed=CLIENTS) as ledger:
            time.sleep(1)
            kill(bouncer.process)
            time.sleep(1)
            down = get(port, "/health")
            time.sleep(1)
            stack.enter_context(Bouncer(url, log, port=bouncer.port))
            recovered = wait_for(lambda: (get(port, "/health") or down).status == 200, 20)
            created_when_back = len(ledger.created)
            time.sleep(0.5)
        record_property("statuses", ledger.statuses)
        record_property("slowest_s", round(ledger.slowest, 2))
        assert (down.status, down.json()) == (503, {"error": contract.DATABASE_UNAVAILABLE})
        assert down.seconds < BOUND
        assert recovered, server.log_tail()
        assert len(ledger.created) > created_when_back, "no write answered 201 once it was back"
        assert set(ledger.statuses) == {201, 503}, ledger.statuses
        # Requests that queued behind the lost connections: refused by admission.
        overloaded = (503, contract.OVERLOADED)
        assert ledger.errors - {overloaded} == {(503, contract.DATABASE_UNAVAILABLE)}
        assert ledger.slowest < BOUND and ledger.unanswered == 0
        assert_ledger_holds(port, ledger, db)


@pytest.mark.parametrize("app", APPS)
def test_a_copy_killed_behind_nginx_has_no_post_replayed_to_the_other(
    app, database_url, db, tmp_path, record_property
):
    """Two copies of the app behind nginx, one killed while every write is in
    flight (held in its INSERT by a lock on review): nginx answers the POSTs
    the killed copy had been sent 503 itself, and passes none to the other
    copy (a POST is not retried once sent: proxy/api.inc), which serves on;
    the clients' retries with their keys store each review once."""
    nginx()
    with contextlib.ExitStack() as stack:
        copies = [
            stack.enter_context(
                running(
                    app, free_port(), app_url(database_url), tmp_path / f"{n}.log", web_workers=1
                )
            )
            for n in range(2)
        ]
        log = stack.enter_context(open(tmp_path / "nginx.log", "w"))
        listen = free_port()
        stack.enter_context(proxy.proxied([port_of(copy) for copy in copies], listen, log))
        locker = stack.enter_context(contextlib.closing(psycopg2.connect(database_url)))
        with Load(listen, clients=0, keyed=CLIENTS) as ledger:
            time.sleep(0.5)
            query_none(locker, "LOCK TABLE review IN EXCLUSIVE MODE")  # INSERTs wait
            time.sleep(0.5)
            kill(copies[0].process)
            created_at_the_kill = len(ledger.created)
            time.sleep(0.5)
            locker.commit()  # what the killed copy had sent to Postgres runs now
            time.sleep(1)
        record_property("statuses", ledger.statuses)
        logs = "\n".join(
            f"{name}: {(tmp_path / name).read_text()[-1500:]}"
            for name in ("nginx.log", "0.log", "1.log")
        )  # once in a CI rehearsal, no 503 at all: where did the held POSTs go?
        assert ledger.statuses.get(503), f"nginx passed the killed copy's POSTs on:\n{logs}"
        assert len(ledger.created) > created_at_the_kill, "the other copy did not serve on"
        assert set(ledger.statuses) == {201, 503}, ledger.statuses
        assert ledger.errors == {(503, contract.PROXY_MESSAGES[503])}
        assert ledger.unanswered == 0
        assert_ledger_holds(listen, ledger, db)
