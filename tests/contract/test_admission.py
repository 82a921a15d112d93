"""Admission (common/admission.py): past its budget a request is refused at
once, 503 with Retry-After and the contract's JSON, and nothing is written;
within it nothing is refused.

Both PoolWrappers on the real Postgres (the budget of a waiter running out,
the queue ahead longer than the budget, the server's queue before the app),
then every app under its real server over HTTP, its one connection held by a
statement a lock keeps waiting.
"""

import asyncio
import json
import socket
import time
import types
from concurrent.futures import ThreadPoolExecutor

import psycopg2
import pytest
import requests

from common import admission, async_pool_wrapper, contract, gthread, pool_wrapper
from db.embedded import free_port
from infra import apps
from tests import rating_sources
from tests.faults import nginx
from tests.helpers import LOCK_WAITERS, port_of, query, serve
from tools import proxy
from tools.serve import APPS

MARGIN = 1.0  # seconds: a loaded CI machine's slack on every bound below
OVERLOADED = {"error": contract.OVERLOADED}


# -- The pools, on the real Postgres -----------------------------------------


def sync_pool(database_url, budget):
    return pool_wrapper.PoolWrapper(
        database_url, min_size=0, max_size=1, timeout=10, queue_budget=budget
    ).open()


def refused_after(acquire):
    """Seconds acquire() took to raise Overloaded (fails if it did not)."""
    started = time.monotonic()
    with pytest.raises(admission.Overloaded) as refused:
        acquire()
    assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "1"}
    return time.monotonic() - started


def take(pool):
    with pool.acquire():
        pass


def test_a_waiter_whose_budget_runs_out_is_refused_then(database_url):
    pool = sync_pool(database_url, budget=0.3)
    try:
        with pool.acquire():
            took = refused_after(lambda: take(pool))
        take(pool)  # given back: served at once
    finally:
        pool.close()
    assert 0.25 <= took < 0.3 + MARGIN


def test_a_queue_longer_than_the_budget_is_refused_at_once(database_url):
    """Once a connection is known to be held 0.5 s and the pool's queue stood
    past a 0.03 s budget (a waiter refused after its wait), a request behind a
    held connection would wait past its budget: refused before it waits."""
    pool = sync_pool(database_url, budget=0.03)
    try:
        with pool.acquire():
            time.sleep(0.5)
        with pool.acquire():
            waited = refused_after(lambda: take(pool))
            took = refused_after(lambda: take(pool))
    finally:
        pool.close()
    assert waited >= 0.03 and took < 0.025


def test_no_budget_waits_for_the_pool_timeout_as_before(database_url):
    pool = pool_wrapper.PoolWrapper(database_url, min_size=0, max_size=1, timeout=0.3).open()
    try:
        with pool.acquire(), pytest.raises(TimeoutError):
            take(pool)
    finally:
        pool.close()


def admitted_until_refused(admit, seconds=1.0):
    """How long admit() let requests in, one every 10 ms, before it refused one
    (fails if it never did within `seconds`)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            admit()
        except admission.Overloaded as refused:
            assert refused.headers == {"Retry-After": "1"}
            return time.monotonic() - started
        time.sleep(0.01)
    raise AssertionError(f"nothing refused in {seconds} s")


def test_a_queue_that_stands_past_the_budget_is_refused_a_burst_is_not():
    """gunicorn's queue (common/gthread.py judges each request's wait by it):
    one request queued long ago is let in (a burst, a stall); requests that
    all waited past the budget through a whole interval (CoDel's rule) are
    refused; one queued just now is let in again."""
    standing = admission.Standing(0.2)
    assert not standing.refuse(0.3)  # alone: no queue stood before it
    took = admitted_until_refused(lambda: raise_if(standing.refuse(0.3)))
    assert not standing.refuse(0.0)
    assert admission.INTERVAL <= took < admission.INTERVAL + MARGIN


def raise_if(refuse):
    if refuse:
        raise admission.Overloaded()


async def async_refusal(database_url, budget, hold):
    """Seconds the async pool took to refuse two requests, one after the other,
    behind a held connection, once a connection was held `hold` seconds."""
    pool = async_pool_wrapper.PoolWrapper(
        database_url, min_size=0, max_size=1, timeout=10, queue_budget=budget
    )
    await pool.open()
    try:
        async with pool.acquire():
            await asyncio.sleep(hold)
        async with pool.acquire():
            took = []
            for _ in range(2):  # the second behind a queue the first found standing
                started = time.monotonic()
                with pytest.raises(admission.Overloaded) as refused:
                    async with pool.acquire():
                        pass
                took.append(time.monotonic() - started)
        async with pool.acquire():  # given back: served at once
            pass
    finally:
        await pool.close()
    assert refused.value.headers == {"Retry-After": "1"}
    return took


def test_the_async_pool_refuses_a_waiter_whose_budget_runs_out(database_url):
    first, _ = asyncio.run(async_refusal(database_url, budget=0.3, hold=0))
    assert 0.25 <= first < 0.3 + MARGIN


def test_the_async_pool_refuses_a_queue_longer_than_the_budget_at_once(database_url):
    first, second = asyncio.run(async_refusal(database_url, budget=0.03, hold=0.5))
    assert first >= 0.03 and second < 0.025


# -- Each app, over HTTP, under its real server --------------------------------

BUDGET = 0.3


def one_worker(request, database_url, tmp_path_factory, **settings):
    """The fixture's app on one worker process, with these settings."""
    logs = tmp_path_factory.mktemp("logs")
    yield from serve(request.param, database_url, logs, web_workers=1, **settings)


@pytest.fixture(scope="module", params=APPS)
def admitting(request, database_url, tmp_path_factory):
    """An app with one worker and one connection, and a budget of BUDGET s."""
    yield from one_worker(
        request, database_url, tmp_path_factory, pool_max_size=1, queue_budget=BUDGET, web_threads=4
    )


def timed(method, url, **kwargs):
    started = time.monotonic()
    response = requests.request(method, url, timeout=10, **kwargs)
    return response, time.monotonic() - started


def asked_behind_a_held_read(url, db, database_url):
    """The app's one connection held by a read that waits on a locked film
    table; meanwhile a read and a write are asked. (The held read's response,
    [(response, seconds) of the read and the write]), once the lock went."""
    assert timed("GET", f"{url}/films/995/")[0].status_code == 200  # connected
    locker = psycopg2.connect(database_url)
    try:
        with locker.cursor() as cursor:
            cursor.execute("BEGIN; LOCK TABLE film IN ACCESS EXCLUSIVE MODE")
        with ThreadPoolExecutor(1) as background:
            held = background.submit(timed, "GET", f"{url}/films/995/")
            wait_for_lock_waiter(db)
            read = timed("GET", f"{url}/films/994/")
            write = timed("POST", f"{url}/reviews/", json={"film_id": 994, "rating": 4})
            locker.rollback()
            return held.result(timeout=10)[0], [read, write]
    finally:
        locker.close()


def test_past_the_budget_requests_are_refused_fast_and_write_nothing(admitting, db, database_url):
    """The app's one connection waits on a locked table; a read and a write
    behind it are refused within the budget; the held read is answered once
    the lock goes."""
    held_response, asked = asked_behind_a_held_read(admitting.url, db, database_url)
    for response, took in asked:
        assert (response.status_code, response.json()) == (503, OVERLOADED)
        assert response.headers["Retry-After"] == "1"
        assert response.headers["Content-Type"].startswith("application/json")
        assert took < BUDGET + MARGIN
    assert held_response.status_code == 200
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


def test_within_the_budget_nothing_is_refused(admitting, db):
    url = admitting.url
    statuses = [timed("GET", f"{url}/films/995/")[0].status_code for _ in range(20)]
    posted = timed("POST", f"{url}/reviews/", json={"film_id": 995, "rating": 5})[0]
    assert statuses == [200] * 20 and posted.status_code == 201
    assert query(db, "SELECT count(*) FROM review") == [(1,)]


def test_behind_nginx_with_its_limit_past_it_nginx_refuses_at_once_and_writes_nothing(
    admitting, db, database_url, tmp_path
):
    """nginx in front, giving the app one request at a time (--proxy limit:
    max_conns=1): while that one waits on a locked table, a read and a write
    are refused by nginx itself (its log says no copy could take them), the contract's
    503 with Retry-After, without waiting; nothing is written. Once the lock
    goes, every request is served, the write stored."""
    nginx()
    with (
        open(tmp_path / "nginx.log", "w") as log,
        proxy.proxied(port_of(admitting), free_port(), log, limit=1) as handle,
    ):
        url = handle.url
        assert proxy.max_conns(handle) == 1
        held_response, asked = asked_behind_a_held_read(url, db, database_url)
        for response, took in asked:
            assert (response.status_code, response.json()) == (503, OVERLOADED)
            assert response.headers["Retry-After"] == "1"
            assert response.headers["Content-Type"].startswith("application/json")
            assert took < MARGIN
        assert held_response.status_code == 200
        assert query(db, "SELECT count(*) FROM review") == [(0,)]
        assert (tmp_path / "nginx.log").read_text().count("no live upstreams") == 2  # nginx's
        answers = [timed("GET", f"{url}/films/995/")[0].status_code for _ in range(10)]
        posted = timed("POST", f"{url}/reviews/", json={"film_id": 995, "rating": 5})[0]
    assert answers == [200] * 10 and posted.status_code == 201
    assert query(db, "SELECT count(*) FROM review") == [(1,)]


def wait_for_lock_waiter(db, timeout=5.0):
    """Until a session of the app's waits on the lock (its one connection held)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = query(db, LOCK_WAITERS)
        if waiting != [(0,)]:
            return
        time.sleep(0.01)
    raise AssertionError("no statement of the app's waited on the lock")


@pytest.fixture(scope="module", params=[app for app in APPS if apps.get(app).interface == "wsgi"])
def one_thread(request, database_url, tmp_path_factory):
    """A sync app on one gunicorn thread: a second request waits in the worker's queue."""
    yield from one_worker(
        request, database_url, tmp_path_factory, queue_budget=BUDGET, web_threads=1
    )


QUEUED = 200  # writes queued behind the one thread: more than it serves in an interval


def behind_a_locked_film(url, db, database_url, ask):
    """One thread's app held on a locked film table while QUEUED calls of
    ask() queue behind it for a second; then the lock goes: (the held GET's
    response, what each ask() returned)."""
    assert timed("GET", f"{url}/films/995/")[0].status_code == 200
    locker = psycopg2.connect(database_url)
    try:
        with locker.cursor() as cursor:
            cursor.execute("BEGIN; LOCK TABLE film IN ACCESS EXCLUSIVE MODE")
        with ThreadPoolExecutor(QUEUED + 1) as background:
            held = background.submit(timed, "GET", f"{url}/films/995/")
            wait_for_lock_waiter(db)
            queued = [background.submit(ask) for _ in range(QUEUED)]
            time.sleep(1.0)
            locker.rollback()
            return held.result(timeout=10)[0], [future.result(timeout=30) for future in queued]
    finally:
        locker.close()


def test_writes_that_stood_in_gunicorns_queue_past_the_budget_are_refused(
    one_thread, db, database_url
):
    """The one thread waits on a locked table for a second while QUEUED writes
    queue behind it. Then it serves them in turn: the first, from a queue no
    one had measured yet, are stored (CoDel's rule: a burst passes); once the
    queue has stood past the budget through an interval, the rest are refused
    before any work (common/gthread.py), 503 with Retry-After: every 201 is a
    row, no refusal is."""
    url = one_thread.url
    review = {"film_id": 994, "rating": 4}
    held_response, writes = behind_a_locked_film(
        url, db, database_url, lambda: timed("POST", f"{url}/reviews/", json=review)[0]
    )
    assert held_response.status_code == 200
    statuses = [write.status_code for write in writes]
    assert set(statuses) == {201, 503}, statuses
    for write in writes:
        if write.status_code == 503:
            assert write.json() == OVERLOADED and write.headers["Retry-After"] == "1"
    assert query(db, "SELECT count(*) FROM review") == [(statuses.count(201),)]


def test_reads_that_stood_in_the_queue_are_refused_and_kept_alive(one_thread, db, database_url):
    """The same with reads, each on a connection of its own that then asks
    again: a GET is refused by the worker's main thread, or by the thread that
    takes it, the same 503 either way (common/gthread.py), and the connection
    it came on carries the next request."""
    url = one_thread.url
    held_response, asked = behind_a_locked_film(
        url, db, database_url, lambda: twice(f"{url}/films/994/")
    )
    assert held_response.status_code == 200
    answers = [answer for pair in asked for answer in pair]
    assert {status for status, _, _ in answers} == {200, 503}
    for status, headers, body in answers:
        if status == 503:
            assert json.loads(body) == OVERLOADED and headers["retry-after"] == "1"
            assert headers["content-type"] == "application/json"


def twice(url):
    """GET url twice over one kept-alive connection: [(status, headers, body)] * 2."""
    session = requests.Session()
    answers = []
    for _ in range(2):
        response = session.get(url, timeout=30)
        headers = {name.lower(): value for name, value in response.headers.items()}
        answers.append((response.status_code, headers, response.content))
    return answers


@pytest.mark.parametrize(
    "head, refused_at_once",
    [
        (b"GET /films/1/ HTTP/1.1\r\nHost: x\r\n\r\n", True),
        (b"GET /films/1/ HTTP/1.1\r\nHost: x\r\n", False),  # not whole yet
        (b"GET /films/1/ HTTP/1.1\r\nHost: x\r\n\r\nGET /", False),  # pipelined
        (b"HEAD /films/1/ HTTP/1.1\r\nHost: x\r\n\r\n", False),  # no body to send
        (b"POST /reviews/ HTTP/1.1\r\nContent-Length: 2\r\n\r\n", False),
        (b"GET / HTTP/1.0\r\n\r\n", False),  # closes: the thread's
        (b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", False),
        (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", False),
        (b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", False),
        (b"GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", False),
        (b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", False),  # never refused
        (b"GET /health/ HTTP/1.1\r\nHost: x\r\n\r\n", False),
    ],
)
def test_a_server_refuses_before_parsing_only_a_whole_plain_get(head, refused_at_once):
    """What gunicorn's main thread, uvicorn's and Sanic's protocols answer
    from the bytes read (common/admission.py's plain_get)."""
    assert admission.plain_get(head) is refused_at_once


def test_a_requests_wait_counts_from_when_it_reached_the_kernel():
    """common/gthread.py's peek: the bytes waiting, not read, and when they
    arrived (SO_TIMESTAMPNS, inherited from the listener), however long the
    worker took to look."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setsockopt(socket.SOL_SOCKET, gthread.SO_TIMESTAMPNS, 1)
        with socket.create_connection(listener.getsockname()) as client:
            served, _ = listener.accept()
            with served:
                client.sendall(b"GET / HTTP/1.1\r\n\r\n")
                time.sleep(0.3)
                conn = types.SimpleNamespace(sock=served, initialized=False)
                now = time.monotonic()
                head, arrived = gthread.peek(conn, now)
                assert head == b"GET / HTTP/1.1\r\n\r\n" == served.recv(100)
                assert 0.3 <= now - arrived < 0.3 + MARGIN
                assert gthread.peek(conn, now) == (b"", now)  # nothing waits: now


def a_worker(connections, threads=16):
    """What common/gthread.py's hook reads of a gunicorn gthread worker:
    connections held, threads, a queue for them that is empty; handle_request
    records how long admission says the request has waited."""
    seen = []
    worker = types.SimpleNamespace(
        cfg=types.SimpleNamespace(threads=threads, is_ssl=True),  # no peeking
        sockets=[],
        nr_conns=connections,
        tpool=types.SimpleNamespace(_work_queue=types.SimpleNamespace(qsize=lambda: 0)),
        enqueue_req=None,
        handle_request=lambda req, conn: seen.append(admission.waited()),
    )
    gthread.post_worker_init(worker)
    return worker, seen


@pytest.mark.parametrize("connections", [16, 33], ids=["not crowded", "crowded"])
def test_a_request_carries_its_wait_to_the_pool_only_from_a_crowded_worker(
    connections, monkeypatch
):
    """A request that waited 0.2 s before a thread took it, in a queue that
    does not stand yet (a burst: admitted): from a worker with more than
    twice as many connections as threads, the pool counts that wait against
    the budget; from one with fewer, the wait was for the CPU (a closed loop
    no larger than the threads: no queue grows), and the pool's budget starts
    as the thread takes it. (./benchmark.sh's 20 clients on two workers of
    16 threads, split unevenly, were refused at the pool so.)"""
    monkeypatch.setenv("DATABASE_URL", "postgresql://unused@127.0.0.1/unused")  # not connected
    worker, seen = a_worker(connections)
    conn = types.SimpleNamespace(queued_at=time.monotonic() - 0.2)
    worker.handle_request(types.SimpleNamespace(path="/films/"), conn)
    [waited] = seen
    if connections > 2 * worker.cfg.threads:
        assert 0.2 <= waited < 0.2 + MARGIN
    else:
        assert waited < 0.05


# -- The async apps' Gate ------------------------------------------------------


def queue_at_the_gate(gate, passes, gap):
    """Admit passes + 10 requests at once, then let `passes` of them pass one
    every `gap` seconds (a queue draining at that pace): the tickets still
    waiting."""
    tickets = [gate.admit() for _ in range(passes + 10)]
    assert None not in tickets  # a burst: nothing stood before it
    for ticket in tickets[:passes]:
        time.sleep(gap)
        ticket.passed()
    return tickets[passes:]


def test_the_gate_refuses_a_newcomer_the_queue_ahead_would_keep_past_the_budget():
    """A queue that drains one request every 20 ms and has stood past a 50 ms
    budget: with 10 ahead (0.2 s at that pace) a newcomer is refused; once
    they pass, one is admitted again."""
    gate = admission.Gate(0.05, 1)
    waiting = queue_at_the_gate(gate, passes=20, gap=0.02)
    assert gate.ahead == 10 and gate.standing.stands
    assert gate.admit() is None
    for ticket in waiting:
        ticket.passed()
        ticket.passed()  # once: again counts nothing
    assert gate.ahead == 0
    assert gate.admit() is not None


def test_the_gate_admits_fewer_ahead_than_the_pool_has_connections():
    """The same standing queue, ten ahead, one every 20 ms: with a pool of
    eleven connections a newcomer is admitted (a closed loop of eleven
    clients cannot grow it), with ten it is refused."""
    for connections, admitted in ((11, True), (10, False)):
        gate = admission.Gate(0.05, connections)
        queue_at_the_gate(gate, passes=20, gap=0.02)
        assert gate.ahead == 10 and gate.standing.stands
        assert (gate.admit() is not None) == admitted, connections


def test_the_gate_never_refuses_the_health_check():
    """An orchestrator that saw the health check fail past capacity would
    replace a server that is only busy."""
    gate = admission.Gate(0.05, 1)
    queue_at_the_gate(gate, passes=20, gap=0.02)
    assert gate.admit("/films/995/") is None
    assert gate.admit("/health") is not None and gate.admit("/health/") is not None


def test_a_gate_that_refused_everyone_admits_again_once_its_verdict_is_stale():
    """Refusing every newcomer records no wait, so the verdict that the
    queue stands would never change: it counts for one INTERVAL past its
    own, then a newcomer is admitted and measured again."""
    gate = admission.Gate(0.05, 1)
    queue_at_the_gate(gate, passes=20, gap=0.02)
    assert gate.admit() is None
    time.sleep(3 * admission.INTERVAL)
    assert gate.admit() is not None


def test_the_gate_admits_a_queue_that_drains_within_the_budget():
    gate = admission.Gate(0.5, 1)
    queue_at_the_gate(gate, passes=20, gap=0.002)
    assert gate.admit() is not None


def test_without_a_budget_the_gate_refuses_nothing():
    gate = admission.Gate(0, 1)
    queue_at_the_gate(gate, passes=20, gap=0.02)
    assert gate.admit() is not None


def test_an_event_loops_lag_is_how_late_its_timer_ran():
    """The Lag of an idle loop hears its timer within a few ms of when it
    was due; of a loop kept busy 50 ms at a time, about that late (wide
    margins: a shared machine)."""
    heard = []

    async def scenario():
        admission.Lag(asyncio.get_running_loop(), heard.append)
        await asyncio.sleep(0.2)
        idle = sorted(heard)
        heard.clear()
        for _ in range(4):
            time.sleep(0.05)  # the loop runs nothing else meanwhile
            await asyncio.sleep(0)
        return idle

    idle = asyncio.run(scenario())
    assert len(idle) >= 5 and idle[len(idle) // 2] < 0.02, idle
    assert heard and max(heard) >= 0.04, heard


def open_at_the_gate(gate, count):
    """count requests admitted at once, none answered yet: their tickets."""
    tickets = [gate.admit() for _ in range(count)]
    assert None not in tickets and gate.open == count
    return tickets


def test_a_late_loop_limits_the_requests_open_to_a_share_of_them():
    """Forty requests open when the loop runs late: the limit falls to 36
    found open, and a newcomer is refused; with five answered, five are
    admitted, and then none."""
    gate = admission.Gate(0.05, 2)
    tickets = open_at_the_gate(gate, 40)
    gate.heard(gate.target)
    assert gate.limit == 36 and gate.admit() is None
    for ticket in tickets[:5]:
        ticket.answered()
        ticket.answered()  # once: again counts nothing
    assert gate.open == 35 and gate.ahead == 35
    assert gate.admit() is not None and gate.admit() is not None
    assert gate.admit() is None


def test_the_lag_never_limits_fewer_requests_than_twice_the_pools_connections():
    """However late the loop, a newcomer that finds no more requests open
    than twice the pool's connections (or LEAST_OPEN) is admitted (a closed
    loop that size never grows, however unevenly it shares the workers),
    and the health check always is."""
    gate = admission.Gate(0.05, 10)
    open_at_the_gate(gate, 20)
    for _ in range(50):
        gate.heard(1.0)
    assert gate.limit == 20
    assert gate.admit() is not None and gate.admit() is None
    assert gate.admit("/health") is not None


def test_a_loop_on_time_lets_the_limit_grow_back_while_it_is_used():
    """Within the target the limit grows by one a tick, while at least half
    of it is open; with fewer open it stays (an idle worker's limit is not
    a promise to a burst)."""
    gate = admission.Gate(0.05, 2)
    tickets = open_at_the_gate(gate, 40)
    gate.heard(gate.target)
    gate.heard(0.0)
    assert gate.limit == 37
    for ticket in tickets[:25]:
        ticket.answered()
    gate.heard(0.0)
    assert gate.limit == 37


def test_without_a_budget_a_late_loop_refuses_nothing():
    gate = admission.Gate(0, 1)
    open_at_the_gate(gate, 10)
    gate.heard(1.0)
    assert gate.admit() is not None


def test_the_async_pool_tells_the_gate_a_request_has_its_connection(database_url):
    """admission.passed(), called by the pool once a request has its place,
    ends the wait of the ticket admitted in that request's context (the view
    runs in a task of its own: it sees the ticket)."""
    gate = admission.Gate(0.05, 1)

    async def request(pool):
        gate.admit()
        assert gate.ahead == 1
        async with pool.acquire():
            assert gate.ahead == 0

    async def scenario():
        pool = async_pool_wrapper.PoolWrapper(database_url, min_size=0, max_size=1)
        await pool.open()
        try:
            await asyncio.ensure_future(request(pool))
        finally:
            await pool.close()

    asyncio.run(scenario())


@pytest.fixture(scope="module", params=[app for app in APPS if apps.get(app).interface != "wsgi"])
def one_loop(request, database_url, tmp_path_factory):
    """An async app on one event loop and one connection, with a budget of 10 ms."""
    yield from one_worker(
        request, database_url, tmp_path_factory, pool_max_size=1, queue_budget=0.01
    )


@pytest.fixture(scope="module", params=[app for app in APPS if apps.get(app).interface != "wsgi"])
def eight_connections(request, database_url, tmp_path_factory):
    """An async app on one event loop with a pool of eight, and a budget of 2 ms."""
    yield from one_worker(
        request, database_url, tmp_path_factory, pool_max_size=8, queue_budget=0.002
    )


def test_a_closed_loop_no_larger_than_the_pool_is_never_refused(eight_connections):
    """Eight clients, each asking again as soon as it is answered, for 2 s,
    on the heaviest route (every film, a few ms of CPU each): their requests
    queue for the loop past the 2 ms budget, but never more of them than the
    pool has connections, and none is refused."""
    statuses = closed_loop(f"{eight_connections.url}/films/", clients=8, seconds=2.0)
    assert len(statuses) > 8 and set(statuses) == {200}, statuses.count(503)


def closed_loop(url, clients, seconds):
    """The status of every answer to clients asking GET url, each again as
    soon as it is answered, for that many seconds."""
    return [response.status_code for response in answers(url, clients, seconds)]


def answers(url, clients, seconds):
    """Every response to clients asking GET url, each again as soon as it
    is answered, for that many seconds."""
    deadline = time.monotonic() + seconds

    def ask_until_deadline():
        with requests.Session() as session:
            responses = []
            while time.monotonic() < deadline:
                responses.append(session.get(url, timeout=30))
            return responses

    with ThreadPoolExecutor(clients) as pool:
        asked = [pool.submit(ask_until_deadline) for _ in range(clients)]
        return [response for future in asked for response in future.result(timeout=60)]


@pytest.fixture(scope="module", params=[app for app in APPS if apps.get(app).interface != "wsgi"])
def asking_sources(request, database_url, tmp_path_factory):
    """An async app on one event loop with a pool of four and a budget of
    10 ms, asking three sources of this process's that answer at once."""
    ports = [free_port() for _ in range(3)]
    with rating_sources.sources(ports, "up", "up", "up"):
        fanout = " ".join(f"http://127.0.0.1:{port}" for port in ports)
        yield from one_worker(
            request,
            database_url,
            tmp_path_factory,
            pool_max_size=4,
            queue_budget=0.01,
            upstream_fanout=fanout,
            upstream_timeout=5,
        )


def test_past_an_event_loops_capacity_the_route_that_calls_out_is_refused_too(
    asking_sources,
):
    """48 clients ask for a film's ratings again and again for 2 s. Each
    request gives its pool connection back before it asks the sources, so
    the pool's queue never stands; the event loop's does, and past it the
    app refuses, 503 with Retry-After and the contract's JSON. Every other
    answer is the film's ratings. Then four clients on the heaviest route
    run the loop late again, and none is refused: every request of the
    flood, answered or refused, has left the gate's count of those open."""
    url = asking_sources.url
    flood = answers(f"{url}/films/995/ratings/", clients=48, seconds=2.0)
    refused = [response for response in flood if response.status_code == 503]
    assert refused and len(refused) < len(flood)
    for response in refused:
        assert response.json() == OVERLOADED and response.headers["Retry-After"] == "1"
    for response in flood:
        if response.status_code != 503:
            assert response.status_code == 200 and response.json()["unavailable"] == []
    statuses = closed_loop(f"{url}/films/", clients=4, seconds=1.0)
    assert statuses and set(statuses) == {200}, statuses.count(503)


@pytest.fixture
def slow_writes(db):
    """Each insert into review holds its connection 10 ms (a trigger in the
    tests' own database, dropped afterwards): one connection stores at most
    100 a second, whatever the machine, far fewer than the clients ask."""
    with db.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS"
            " $$BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END$$;"
            " CREATE TRIGGER slow_write BEFORE INSERT ON review"
            " FOR EACH ROW EXECUTE FUNCTION slow_write()"
        )
    try:
        yield db
    finally:
        with db.cursor() as cursor:
            cursor.execute("DROP TRIGGER slow_write ON review; DROP FUNCTION slow_write()")


def test_past_an_event_loops_capacity_requests_are_refused_and_no_refused_write_is_stored(
    one_loop, slow_writes
):
    """QUEUED // 4 clients write at once, and as many read, again and again
    for 2 s, each over its own kept-alive connection, through one connection
    to Postgres that stores 100 writes a second: the queue stands past 10 ms,
    and the app refuses what it cannot serve within it (a plain GET before it
    is parsed, anything else before the framework, or at the pool), 503 with
    Retry-After and the contract's JSON, and each connection carries the next
    request. Every 201 is a row; no refusal is; nothing else is answered."""
    db = slow_writes
    url = one_loop.url
    review = {"film_id": 994, "rating": 4}
    deadline = time.monotonic() + 2.0

    def ask_until_deadline(method, path, **kwargs):
        session = requests.Session()
        answers = []
        while time.monotonic() < deadline:
            response = session.request(method, f"{url}{path}", timeout=30, **kwargs)
            answers.append((response.status_code, response.headers, response.content))
        return answers

    clients = QUEUED // 4
    with ThreadPoolExecutor(2 * clients) as pool:
        writes = [
            pool.submit(ask_until_deadline, "POST", "/reviews/", json=review)
            for _ in range(clients)
        ]
        reads = [pool.submit(ask_until_deadline, "GET", "/films/995/") for _ in range(clients)]
        written = [answer for future in writes for answer in future.result(timeout=60)]
        read = [answer for future in reads for answer in future.result(timeout=60)]
    statuses = [status for status, _, _ in written]
    assert set(statuses) == {201, 503}, set(statuses)
    assert {status for status, _, _ in read} == {200, 503}
    for status, headers, body in written + read:
        if status == 503:
            assert json.loads(body) == OVERLOADED and headers["Retry-After"] == "1"
            assert headers["Content-Type"] == "application/json"
    assert query(db, "SELECT count(*) FROM review") == [(statuses.count(201),)]
