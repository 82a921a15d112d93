"""What one request can cost the server: the costliest bodies a client can
send (tests/corpus.py's FRAGMENTS, repeated to the body limit), to every app
under its production server, directly and through the proxy. Each is refused
with the contract's 400 in bounded time and CPU, and the app keeps serving
while they are in flight: /health answers. (A quadratic JSON depth scan once
made one 64 KB body cost 20 s of CPU, in every app.)"""

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra import procfs
from tests.corpus import filled
from tests.faults import behind_proxy, post, raw
from tests.helpers import port_of

# The units that were quadratic, the costliest pair now, and deep nesting.
COSTLIEST = ['\\"', '"\\"', '"\\\\\\"', "}}", "[", '{"a":']
AT_ONCE = 4  # more than the test servers' two workers
BOUND_SECONDS = 5.0  # wall time of any answer, with a wide margin
CPU_BOUND = 0.5  # CPU seconds the server may spend on one such request


@pytest.fixture(scope="module", params=["direct", "proxy"])
def target(request, server, tmp_path_factory):
    """The app's port, or nginx's in front of it."""
    if request.param == "direct":
        yield server
    else:
        yield from behind_proxy(server, tmp_path_factory.mktemp("logs"))


def health(port):
    return raw(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")


@pytest.mark.parametrize("unit", COSTLIEST)
def test_costliest_bodies_are_refused_cheaply_while_the_app_serves(target, server, db, unit):
    port = port_of(target)
    body = filled(unit)
    used = procfs.cpu_seconds(server.process.pid) if server.process else None
    with ThreadPoolExecutor(AT_ONCE + 1) as pool:
        posts = [pool.submit(post, port, body, BOUND_SECONDS * 2) for _ in range(AT_ONCE)]
        time.sleep(0.05)
        probe = health(port)
        answers = [future.result() for future in posts]
    for answer in answers:
        assert answer.status == 400, answer.body
        assert json.loads(answer.body) == {"error": "request body must be UTF-8 encoded JSON"}
        assert answer.seconds < BOUND_SECONDS
    assert probe.status == 200 and probe.seconds < BOUND_SECONDS
    if used is not None:
        per_request = (procfs.cpu_seconds(server.process.pid) - used) / AT_ONCE
        via = "direct" if target.url == server.url else "proxy"
        print(f"{server.app} {via} {unit!r}: {per_request:.3f} s CPU per request")
        assert per_request < CPU_BOUND
    with db.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM review")
        assert cursor.fetchone() == (0,)
