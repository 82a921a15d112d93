"""tools/serve.py: its advice (a sync app served directly gets a warning), and
a server it started stopped cleanly however soon it is stopped."""

import random
import socket
import time

import pytest

from db.embedded import free_port
from infra import apps, ports, production
from tools.serve import APPS, direct_warning, running

# Served by gunicorn's threaded workers: a connection holds a thread while its
# request is read (their serve.sh).
SYNC = ("flask", "falcon")


@pytest.mark.parametrize("app", APPS)
def test_a_sync_app_served_directly_is_warned_about(app):
    warning = direct_warning(app, proxied=False)
    if app in SYNC:
        assert "--proxy" in warning and app in warning
    else:
        assert warning is None
    assert direct_warning(app, proxied=True) is None


def test_the_warning_follows_serve_sh():
    for app in APPS:
        sync = "--worker-class gthread" in apps.get(app).serve.read_text()
        assert sync == (app in SYNC) == production.read(app).holds_thread


@pytest.mark.slow  # starts each app
@pytest.mark.parametrize("app", APPS)
def test_a_server_stopped_as_soon_as_it_answers_exits_on_its_sigterm(app, database_url, tmp_path):
    """SIGTERM as soon as /health answers (a worker may still be starting):
    the server exits 0, in its 5 s grace period, not killed 10 s later."""
    with running(app, free_port(), database_url, tmp_path / "log", web_workers=2) as server:
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 6
    assert server.process.returncode == 0, server.log_tail()


STOPS = 8  # SIGTERMs sent to Sanic as it starts


@pytest.mark.slow  # starts Sanic STOPS times
def test_sanic_exits_on_a_sigterm_whenever_it_comes_as_its_workers_start(database_url, tmp_path):
    """Sanic 25.12's manager, stopped in its signal handler, hung or failed
    on a SIGTERM that came as it read its workers' states (about 1 in 5 as
    they start), and a worker lost the SIGINT that stops it between telling
    the manager it started and setting its handlers: common/sanic_manager.py.
    Each of STOPS SIGTERMs, from 0 to 0.3 s after /health answers, stops it."""
    delays = random.Random(0).choices(range(0, 300, 10), k=STOPS)
    for attempt, delay in enumerate(delays):
        log = tmp_path / f"{attempt}.log"
        with running("sanic", free_port(), database_url, log, web_workers=2) as server:
            time.sleep(delay / 1000)
            stopping = time.monotonic()
        took = time.monotonic() - stopping
        assert took < 6 and server.process.returncode == 0, (delay, took, server.log_tail())


def test_a_port_handed_out_is_not_handed_out_again_before_it_is_bound(monkeypatch):
    """bind(0) may give a port drawn for a server not started yet (a rating
    source and the app under test once met so): free_port draws again."""
    first = free_port()
    drawn = iter([first, first, 0])

    class Repeating(socket.socket):
        def bind(self, address):
            super().bind((address[0], address[1] or next(drawn)))

    monkeypatch.setattr(ports.socket, "socket", Repeating)
    second = free_port()
    assert second != first
    assert free_port(first) == first  # asked by number: a restart on its port
