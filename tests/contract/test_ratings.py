"""GET /films/<film_id>/ratings/ (docs/contract.md, "A route that waits on
other services"), over HTTP, in every app under its production server and in
Flask's thread-pool variant (variants/flask_threads_app/), against rating
sources this module runs on three fixed ports: the upstream's own service
(upstream/server.py, in a thread here; tests/harness/test_upstream.py runs its
command), with a delay, or nothing (refused), or a server that answers 500,
or one that tries to steer or hold the app (tests/rating_sources.py, HOSTILE).

Each app runs one worker process with one database connection (POOL_MAX_SIZE
1) and, for the sync ones, gthread's threads (GUNICORN_CMD_ARGS, as
./benchmark.sh --worker-threads sets them): several requests at once, one
connection between them, so that a connection held through the calls out
would be seen. No test compares the apps' speed; every bound is the
contract's, with wide margins.
"""

import contextlib
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from common import contract
from infra import ROOT, apps, procfs
from infra.ports import free_port
from tests.faults import behind_proxy
from tests.helpers import query, wait_until
from tests.rating_sources import ELSEWHERE, HOSTILE, expected, sources
from tests.system_tools import system_tool
from tools.serve import APPS, AppNotStarted, Server, running

pytestmark = pytest.mark.slow  # the apps under their servers

TIMEOUT = 0.5  # UPSTREAM_TIMEOUT: seconds for the whole fan-out, under SLOW
MARGIN = 1.0  # what a shared machine may add to a request, generously
VARIANT = apps.scan([ROOT / "variants"])["flask_threads"]
PORTS = [free_port() for _ in range(3)]
SOURCES = [f"http://127.0.0.1:{port}" for port in PORTS]
FILM = 995


def declared(name):
    """The app's registry entry, the variant's too (it is not in the registry
    unless APPS_PATH names its folder)."""
    return VARIANT if name == VARIANT.name else apps.get(name)


# What an app is told of its sources (tests/docs/test_migration_steps.py tells the
# migration's states the same).
SOURCE_SETTINGS = {"upstream_fanout": " ".join(SOURCES), "upstream_timeout": TIMEOUT}


def settings(app_url):
    threaded = declared(app_url).interface == "wsgi"  # gunicorn's sync worker
    return {
        **SOURCE_SETTINGS,
        "web_workers": 1,
        "pool_max_size": 1,
        "pool_timeout": 0.25,  # well inside a fan-out: a held connection is a 503
        **({"gunicorn_cmd_args": "--threads 4"} if threaded else {}),
    }


@pytest.fixture(scope="module", params=[*APPS, VARIANT.name])
def app_url(request, database_url, tmp_path_factory):
    """(name, url) of each app, its sources SOURCES."""
    name = request.param
    log_dir = tmp_path_factory.mktemp("logs")
    variant = {"command": VARIANT.serve_command, "pythonpath": VARIANT.pythonpath}
    label = "flask" if name == VARIANT.name else name
    try:
        with running(
            label,
            free_port(),
            database_url,
            log_dir / f"{name}.log",
            **(variant if name == VARIANT.name else {}),
            **settings(name),
        ) as server:
            yield name, server.url
    except AppNotStarted as error:
        pytest.fail(str(error))


def ratings(url, film_id=FILM):
    started = time.monotonic()
    response = requests.get(f"{url}/films/{film_id}/ratings/", timeout=10)
    return response, time.monotonic() - started


def assert_json(response, status, body):
    assert (response.status_code, response.json()) == (status, body), response.text
    assert response.headers["Content-Type"] == "application/json"


def test_every_source_up(app_url, db):
    with db.cursor() as cursor:
        cursor.execute("INSERT INTO review (film_id, rating) VALUES (995, 4), (995, 5), (1, 2)")
    with sources(PORTS, "up", "up", "up"):
        response, _ = ratings(app_url[1])
        assert_json(response, 200, expected(db, FILM, PORTS, ["up"] * 3))
        assert response.json()["reviews"] == {"count": 2, "average": 4.5}
        response, _ = ratings(app_url[1], 7)  # a film without a review
        assert_json(response, 200, expected(db, 7, PORTS, ["up"] * 3))
        assert response.json()["reviews"] == {"count": 0, "average": None}


@pytest.mark.parametrize(
    "kinds",
    [("up", "up", "slow"), ("up", "down", "up"), ("failing", "up", "up")],
    ids=["one-slow-past-the-timeout", "one-refused", "one-answering-500"],
)
def test_a_source_that_fails_is_null_and_named(app_url, db, kinds):
    # The slow source last: a sync app asks the ones before it in full time.
    with sources(PORTS, *kinds):
        response, took = ratings(app_url[1])
    assert_json(response, 200, expected(db, FILM, PORTS, kinds))
    assert took < TIMEOUT + MARGIN


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_source_cannot_steer_or_hold_the_app(app_url, db, hostile):
    """A redirect (to another host, or to itself), a body that never ends, a
    body of 10 MB: each a failed source, asked once, in every app alike. The
    host a redirect names is never asked; the request ends by the deadline."""
    kinds = ("up", "up", hostile)  # last: a sync app asks the others in full time
    with sources(PORTS, *kinds) as servers:
        response, took = ratings(app_url[1])
        assert servers[PORTS[2]].targets == [f"/films/{FILM}/rating"]
        if ELSEWHERE in servers:
            assert not any(servers[ELSEWHERE].stats()[key] for key in ASKED)
    assert_json(response, 200, expected(db, FILM, PORTS, kinds))
    assert took < TIMEOUT + MARGIN


ASKED = ("answered", "in_flight", "abandoned")  # an upstream's counts of ratings asked


@pytest.mark.parametrize(
    ("kinds", "status", "message"),
    [
        (("down", "down", "down"), 502, contract.NO_RATING_SOURCE),
        (("failing", "down", "failing"), 502, contract.NO_RATING_SOURCE),
        (("slow", "slow", "slow"), 504, contract.NO_RATING_SOURCE_IN_TIME),
        (("down", "slow", "down"), 504, contract.NO_RATING_SOURCE_IN_TIME),
    ],
    ids=["all-refused", "all-failing", "all-slow", "one-slow-the-rest-refused"],
)
def test_every_source_failed(app_url, db, kinds, status, message):
    with sources(PORTS, *kinds):
        response, took = ratings(app_url[1])
    assert_json(response, status, {"error": message})
    assert took < TIMEOUT + MARGIN
    assert query(db, "SELECT count(*) FROM review") == [(0,)]


def test_a_film_that_is_not_there_asks_no_source(app_url, db):
    with sources(PORTS, "up", "up", "up") as upstreams:
        response, _ = ratings(app_url[1], 1001)
        assert_json(response, 404, {"error": contract.FILM_NOT_FOUND})
        assert sum(up.stats()["answered"] for up in upstreams.values()) == 0


APP_SESSIONS = """SELECT state, count(*) FROM pg_stat_activity
                   WHERE datname = current_database() AND pid <> pg_backend_pid()
                     AND backend_type = 'client backend'
                GROUP BY state"""


def test_no_connection_is_held_while_the_sources_answer(app_url, db):
    """While a fan-out waits on slow sources: the app's one connection is
    idle (no statement, no transaction open), and another request gets it at
    once; held, that request would wait POOL_TIMEOUT and answer 503."""
    with sources(PORTS, "slow", "slow", "slow") as upstreams, ThreadPoolExecutor(1) as pool:
        assert requests.get(f"{app_url[1]}/health", timeout=5).status_code == 200  # connected
        waiting = pool.submit(ratings, app_url[1])
        first = upstreams[PORTS[0]]
        assert wait_until(lambda: first.stats()["in_flight"] == 1, TIMEOUT)
        sessions = dict(query(db, APP_SESSIONS))
        film = requests.get(f"{app_url[1]}/films/995/", timeout=5)
        assert first.stats()["in_flight"] == 1, "the fan-out ended before the check"
        assert (film.status_code, film.json()["film_id"]) == (200, 995), film.text
        assert set(sessions) <= {"idle"}, sessions
        assert waiting.result()[0].status_code == 504


def test_a_client_gone_mid_fan_out_leaves_nothing_behind(app_url, db):
    """The client closes its socket while the sources hold their answers: the
    calls end (the async apps cancel them at once, each a task of the
    request's TaskGroup; the sync ones give up at the deadline), no socket to
    a source stays open, nothing is left in flight, the connection is back in
    the pool and the app serves the next request."""
    port = int(app_url[1].rsplit(":", 1)[1])
    cancels = declared(app_url[0]).interface == "asgi"
    with sources(PORTS, "slow", "slow", "slow") as upstreams:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port)) as client:
                client.sendall(b"GET /films/995/ratings/ HTTP/1.1\r\nHost: x\r\n\r\n")
                deadline = time.monotonic() + TIMEOUT
                assert wait_until(lambda: in_flight(upstreams) > 0, TIMEOUT)
            if cancels:  # well before the deadline, when a leaked call would end
                assert wait_until(lambda: in_flight(upstreams) == 0, deadline - time.monotonic())
        assert wait_until(lambda: in_flight(upstreams) == 0, TIMEOUT + MARGIN)
        assert wait_until(lambda: not any(map(procfs.connections_to, PORTS)), MARGIN)
        assert set(dict(query(db, APP_SESSIONS))) <= {"idle"}
        assert sum(up.stats()["abandoned"] for up in upstreams.values()) >= 3
    with sources(PORTS, "up", "up", "up"):
        assert ratings(app_url[1])[0].status_code == 200


def test_one_hung_source_bounds_every_request(app_url):
    """p99 of the route, one source never answering, at most the timeout and
    a margin: 20 requests, 4 at a time."""
    with sources(PORTS, "up", "up", "slow"), ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: ratings(app_url[1]), range(20)))
    assert {response.status_code for response, _ in answers} == {200}
    assert all(response.json()["unavailable"] == SOURCES[2:] for response, _ in answers)
    times = sorted(took for _, took in answers)
    assert times[-1] <= TIMEOUT + MARGIN, times  # p99 of 20 is the slowest


def test_through_nginx_the_apps_own_errors_pass(app_url, db, tmp_path):
    """nginx answers 503 for its own 502 and 504 (proxy/api.inc), never for
    the app's: an app's 502 or 504 reaches the client as the app sent it."""
    if app_url[0] != "quart":
        pytest.skip("one app is enough: the rule is nginx's")
    system_tool("nginx")
    proxied = behind_proxy(Server(app_url[0], app_url[1], log_path=None, process=None), tmp_path)
    with contextlib.closing(proxied):
        url = next(proxied).url
        with sources(PORTS, "down", "down", "down"):
            assert_json(ratings(url)[0], 502, {"error": contract.NO_RATING_SOURCE})
        with sources(PORTS, "slow", "slow", "slow"):
            assert_json(ratings(url)[0], 504, {"error": contract.NO_RATING_SOURCE_IN_TIME})
        with sources(PORTS, "up", "down", "up"):
            assert ratings(url)[0].json()["unavailable"] == SOURCES[1:2]


def in_flight(upstreams):
    return sum(up.stats()["in_flight"] for up in upstreams.values())
