"""Flask's async views, run (docs/examples/flask_async_views.py): a sync worker
is held for the whole of an async view, so concurrent requests wait for each
other; only awaits inside one request overlap. Wide margins: the views wait
0.5 s, a request that does nothing takes milliseconds; this shared machine
may add tens of them."""

import pytest

from docs.examples import flask_async_views
from docs.examples.flask_async_views import CLIENTS, SLEEP

pytestmark = pytest.mark.slow  # it starts a server


@pytest.fixture(scope="module")
def results():
    with flask_async_views.serving() as port:
        yield flask_async_views.measure(port, repeat=1)


def test_an_async_view_holds_its_worker(results):
    assert results["health_behind_one_s"] > 0.6 * SLEEP
    assert results[f"{CLIENTS}_concurrent_s"] > 0.8 * CLIENTS * SLEEP


def test_awaits_overlap_inside_one_request(results):
    assert results["gather_two_s"] < 1.8 * SLEEP  # one after another: 2 x SLEEP
