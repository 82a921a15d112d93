"""tools/serve.py: its advice (a sync app served directly gets a warning), and
a server it started stopped cleanly however soon it is stopped."""

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
    """Sanic's manager never exits on a SIGTERM sent at once after its first
    worker answers (tools/serve.py, SETTLE): the harness waits that moment out."""
    with running(app, free_port(), database_url, tmp_path / "log", web_workers=2) as server:
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 6  # not the 10 s of a SIGKILL
    log = server.log_tail()
    # Sanic's manager may also fail while it reads its workers' states as a
    # worker still starting is stopped (sanic/mixins/startup.py,
    # _get_process_states): an exit status of 1 with that in its log, at once.
    sanic_race = app == "sanic" and "_get_process_states" in log
    assert server.process.returncode == 0 or (sanic_race and server.process.returncode == 1), log


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
