"""The blocking-call trap of docs/migration.md, run: one blocking call in an
async view stalls every other request on its worker; awaited, or run in a
thread, it does not. Wide margins: the views wait 0.5 s, a request that does
nothing takes milliseconds; this shared machine may add tens of them."""

import pytest

from docs.examples import blocking_trap
from docs.examples.blocking_trap import CLIENTS, SLEEP

pytestmark = pytest.mark.slow  # it starts a server


@pytest.fixture(scope="module")
def results():
    with blocking_trap.serving() as port:
        yield blocking_trap.measure(port, repeat=1)


def test_a_blocking_call_stalls_the_worker(results):
    assert results["health_behind_one_s"]["blocking"] > 0.6 * SLEEP
    assert results[f"{CLIENTS}_concurrent_s"]["blocking"] > 0.8 * CLIENTS * SLEEP


@pytest.mark.parametrize("view", ["awaiting", "in-thread"])
def test_an_awaited_wait_does_not(results, view):
    assert results["health_behind_one_s"][view] < 0.3 * SLEEP
    assert results[f"{CLIENTS}_concurrent_s"][view] < 0.5 * CLIENTS * SLEEP
