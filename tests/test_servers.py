"""Every app under every server of bench/stack/servers.py that serves its interface
answers each benchmarked route per the contract: the server matrix measures
only pairs that pass this, and reports the others."""

import pytest

from bench.routes import ROUTES
from bench.stack import servers, verify
from bench.stack.budget import Shape
from db import embedded
from tools.serve import APPS, AppNotStarted, running

pytestmark = pytest.mark.slow  # starts a server per pair

ONE_WORKER = Shape(processes=1, threads=2, pool=2, holds_thread=True)

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
        with running(app, port, database_url, tmp_path / "log", 30, command) as server:
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
