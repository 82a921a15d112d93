"""The upstream, the rating sources' service (upstream/): its HTTP, in a
thread of this process (fast), and the command itself against a plain
client (slow): it honours its delay, reports what it did and stops on
SIGTERM. Margins are wide: the machine is shared, and this is not a
benchmark."""

import http.client
import io
import signal
import socket
import statistics
import time

import pytest

from tests.helpers import wait_until
from tests.upstream_thread import UpstreamThread
from upstream import __main__ as command
from upstream.process import launched
from upstream.server import rating
from upstream.watch import Watcher


def connect(url):
    host, port = url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=10)


def get(connection, path, method="GET"):
    connection.request(method, path)
    response = connection.getresponse()
    return response.status, response.getheader("Allow"), response.read()


def test_each_port_is_a_source_with_its_own_ratings_on_one_connection():
    with UpstreamThread(["0", "0"]) as upstream:
        answers = []
        for url in upstream.urls:
            connection = connect(url)
            for film_id in (1, 995, 995):
                status, _, body = get(connection, f"/films/{film_id}/rating")
                answers.append((status, body))
            connection.close()
        ports = [int(url.rsplit(":", 1)[1]) for url in upstream.urls]
        expected = [
            (200, f'{{"film_id": {film_id}, "rating": {rating(film_id, port)}}}'.encode())
            for port in ports
            for film_id in (1, 995, 995)
        ]
        assert answers == expected
        assert all(1 <= rating(film_id, 9001) <= 5 for film_id in range(1, 2000))
        stats = upstream.stats()
        assert (stats["answered"], stats["in_flight"], stats["abandoned"]) == (6, 0, 0)


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("GET", "/films/0/rating", 404, None),
        ("GET", "/films/2147483648/rating", 404, None),
        ("GET", "/films/abc/rating", 404, None),
        ("GET", "/films/995/", 404, None),
        ("GET", "/nope", 404, None),
        ("POST", "/films/995/rating", 405, "GET, HEAD"),
        ("DELETE", "/stats", 405, "GET, HEAD"),
    ],
)
def test_what_names_no_rating_is_refused_in_json(method, path, status, allow):
    with UpstreamThread(["0"]) as upstream:
        connection = connect(upstream.urls[0])
        answered = get(connection, path, method)
        assert answered[:2] == (status, allow) and answered[2].startswith(b'{"error": ')
        assert get(connection, "/films/0995/rating?x=1")[0] == 200  # the connection goes on
        assert get(connection, "/films/995/rating", "HEAD") == (200, None, b"")


def test_a_malformed_request_is_a_400_and_the_end_of_its_connection():
    with UpstreamThread(["0"]) as upstream:
        host, port = upstream.urls[0].removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(b"NOT HTTP\r\n\r\n")
            answer = b"".join(iter(lambda: client.recv(4096), b""))  # until it closes
        assert answer.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in answer


def test_pipelined_requests_are_answered_in_order():
    with UpstreamThread(["0"], "30ms~30ms") as upstream:
        host, port = upstream.urls[0].removeprefix("http://").split(":")
        requests = b"".join(
            f"GET /films/{n}/rating HTTP/1.1\r\nHost: x\r\n\r\n".encode() for n in range(1, 6)
        )
        requests += b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(requests)
            answer = b"".join(iter(lambda: client.recv(4096), b""))
        ids = [int(part.split(b",")[0]) for part in answer.split(b'"film_id": ')[1:]]
        assert ids == [1, 2, 3, 4, 5]
        assert answer.count(b"HTTP/1.1 200 OK") == 6


def test_the_most_ratings_and_connections_at_once_are_kept():
    """GET /stats says the most ratings asked for at once and the most
    connections open at once since the start (what a run asked of the
    sources at its worst), not only what is open now; and the same since
    the last read (a run's worst, read before and after it)."""
    with UpstreamThread(["0"], "5s") as upstream:
        host, port = upstream.urls[0].removeprefix("http://").split(":")
        clients = [socket.create_connection((host, int(port)), timeout=5) for _ in range(3)]
        for client in clients:
            client.sendall(b"GET /films/995/rating HTTP/1.1\r\nHost: x\r\n\r\n" * 2)
        counts = upstream.service.stats  # watched, not read: a read starts the peaks again
        assert wait_until(lambda: counts.in_flight == 6, 5)
        for client in clients:
            client.close()
        assert wait_until(lambda: counts.connections == 0, 5)
        stats = upstream.stats()
        assert (stats["in_flight"], stats["most_in_flight"], stats["most_connections"]) == (0, 6, 3)
        assert (stats["peak_in_flight"], stats["peak_connections"]) == (6, 3)  # since no read
        again = upstream.stats()  # since the last read: a run's worst, read around it
        assert (again["most_in_flight"], again["most_connections"]) == (6, 3)
        assert (again["peak_in_flight"], again["peak_connections"]) == (0, 0)


def test_a_client_that_leaves_abandons_its_ratings():
    with UpstreamThread(["0"], "5s") as upstream:
        host, port = upstream.urls[0].removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(b"GET /films/995/rating HTTP/1.1\r\nHost: x\r\n\r\n")
            assert wait_until(lambda: upstream.stats()["in_flight"] == 1, 5)
        assert wait_until(lambda: upstream.stats()["abandoned"] == 1, 5)
        stats = upstream.stats()
        assert (stats["in_flight"], stats["answered"], stats["connections"]) == (0, 0, 0)


class Clock:
    """A loop's time() and call_at(), set by hand."""

    def __init__(self):
        self.now = 0.0

    def time(self):
        return self.now

    def call_at(self, when, callback):
        return None


def test_a_saturated_stretch_is_said_once_and_counted(monkeypatch):
    clock, said = Clock(), io.StringIO()
    stats = UpstreamThread(["0"]).service.stats
    cpu = iter([0.0, 0.95, 1.9, 2.0])  # used in each second: 95 %, 95 %, 10 %
    monkeypatch.setattr("upstream.watch.time.process_time", lambda: next(cpu))
    watcher = Watcher(clock, stats, said)
    watcher.start()
    for second in (1, 2, 3):
        clock.now = second
        watcher.judge(clock.now)
    assert stats.saturated_seconds == 2 and not stats.saturated
    lines = said.getvalue().splitlines()
    assert len(lines) == 2 and "saturated: 95% of a core" in lines[0]
    assert lines[1] == "upstream: keeps up again, after 2 s saturated"


def test_a_late_loop_is_saturated_too():
    clock, said = Clock(), io.StringIO()
    stats = UpstreamThread(["0"]).service.stats
    watcher = Watcher(clock, stats, said)
    watcher.start()
    clock.now = watcher.expected + 0.05  # a tick 50 ms late
    watcher.tick()
    clock.now = 1.2
    watcher.judge(clock.now)
    assert stats.saturated and "50 ms late" in said.getvalue()


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        ([], "the following arguments are required: --port"),
        (["--port", "x"], "not a port or a comma list of ports: 'x'"),
        (["--port", "70000"], "not a port"),
        (["--port", "9001,9001"], "a port given twice: 9001,9001"),
        (["--port", "9001", "--delay", "fast"], "not a delay: 'fast'"),
        (["--port", "9001", "--delay", "5ms~10ms"], "a jitter larger than its delay"),
    ],
)
def test_a_bad_option_is_refused_in_one_line(argv, problem, capsys):
    with pytest.raises(SystemExit) as exited:
        command.arguments(argv)
    error = capsys.readouterr().err
    assert exited.value.code == 2 and problem in error and error.count("\n") == 1


@pytest.mark.slow  # the command, for a few seconds
def test_the_command_honours_its_delay_against_a_plain_client(tmp_path):
    with open(tmp_path / "upstream.log", "w") as log, launched([0, 0], "100ms~20ms", log) as up:
        connection = connect(up.urls[1])
        timings = []
        for film_id in range(1, 21):
            started = time.monotonic()
            status, _, _ = get(connection, f"/films/{film_id}/rating")
            timings.append(time.monotonic() - started)
            assert status == 200
        connection.close()
        # Never sooner than the delay less its jitter; later by what a shared
        # machine may add, generously.
        assert min(timings) >= 0.080 - 0.002, timings
        assert max(timings) <= 0.120 + 0.300, timings
        assert 0.080 <= statistics.median(timings) <= 0.200, timings
        stats = up.stats()
        assert (stats["answered"], stats["in_flight"], stats["delay"]) == (20, 0, "100ms~20ms")
        assert stats["cpu_us_per_answer"] > 0 and stats["cpu_seconds"] > 0
        up.process.send_signal(signal.SIGTERM)
        assert up.process.wait(5) == 0
