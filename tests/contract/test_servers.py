"""Every app under every server of bench/sut/servers.py that serves its interface
answers each benchmarked route per the contract, the ratings route with three
rating sources up: the server matrix measures only pairs that pass this, and
reports the others."""

import pytest

from bench.routes import ROUTES
from bench.sut import servers, verify
from bench.sut.budget import Shape
from db import embedded
from tests.rating_sources import sources
from tools.serve import APPS, AppNotStarted, running

pytestmark = pytest.mark.slow  # starts a server per pair

ONE_WORKER = Shape(processes=1, threads=2, pool=2, holds_thread=True)
SOURCES = [embedded.free_port() for _ in range(3)]  # the ratings route's, all up

PAIRS = [
    (app, name)
    for app in APPS
    for name in servers.names_for(app)
    if name != servers.PRODUCTION  # serve.sh: the conformance suite's own
]


@pytest.mark.parametrize(("app", "name"), PAIRS, ids=[f"{a}-{n}" for a, n in PAIRS])
def test_the_pair_serves_the_benchmarked_routes(app, name, database_url, db, tmp_path):
    port = embedded.free_port()
    command = servers.SERVERS[name].command(app, "127.0.0.1", port, ONE_WORKER)
    try:
        fan_out = " ".join(f"http://127.0.0.1:{source}" for source in SOURCES)
        with (
            sources(SOURCES, "up", "up", "up"),
            running(
                app, port, database_url, tmp_path / "log", 30, command, upstream_fanout=fan_out
            ) as server,
        ):
            problems = [
                problem
                for route in ROUTES.values()
                for problem in verify.verify_route(server.url, route, db)
            ]
            assert problems == [], server.log_tail()
    except AppNotStarted as error:
        pytest.fail(str(error))


def test_every_server_names_its_interface_and_workers():
    for server in servers.SERVERS.values():
        assert server.interface in ("wsgi", "asgi")
        assert server.workers(2) >= 1 and all(
            "{" not in arg
            for arg in server.command(
                "flask" if server.interface == "wsgi" else "quart", "127.0.0.1", 8000, ONE_WORKER
            )
        )
