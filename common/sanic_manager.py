"""Sanic's worker manager, stopping its workers outside its signal handler
and once they can be stopped (sanic_app/__init__.py applies it).

Sanic 25.12's manager (sanic/worker/manager.py) stops on SIGTERM or SIGINT
from within the signal handler: it writes each worker's new state to a dict
shared through a multiprocessing Manager. Its main thread reads that dict all
the while (in a loop as its workers start, then every 0.1 s), and Python runs
a handler between two bytecodes of the main thread: between a read's request
to the Manager and its reply, the handler's write takes the read's reply, and
then either the read waits for a reply that has already been taken (the
manager never exits: sanic-org/sanic#2997), or it takes the handler's (the
manager fails and exits with status 1: "'NoneType' object is not a mapping").
A SIGTERM as soon as both workers were ready hung it 13 times in 60 here,
and `docker compose stop` failed it once in CI.

And it stops a worker with SIGINT, which a worker loses between telling the
manager it started and setting its own handlers (sanic/server/runners.py,
_serve_http_1): that worker then serves on, and the manager waits for it.

Here the handler only ends the manager's monitor loop, as Sanic's own handler
does first (None on its pipe); then the manager waits until each worker
serves, at most SERVING seconds, and stops them. A second signal kills them
at once, as it does under Sanic's own handler.
"""

import time
from contextlib import suppress
from signal import Signals

from sanic.exceptions import ServerKilled
from sanic.log import logger
from sanic.worker.manager import WorkerManager

SERVING = 5.0  # seconds a worker that said it started may take to serve


def shutdown_signal(manager, signal, frame):
    """The manager's handler of SIGTERM and SIGINT."""
    if manager._shutting_down or getattr(manager, "signalled", False):
        logger.info("Shutdown interrupted. Killing.")
        with suppress(ServerKilled):
            manager.kill()
        return
    manager.signalled = True
    logger.info("Received signal %s. Shutting down.", Signals(signal).name)
    manager.monitor_publisher.send(None)  # the monitor loop ends


def run(manager):
    """Sanic's WorkerManager.run, its workers stopped once the loop ends."""
    manager.start()
    manager.monitor()
    wait_serving(manager)
    manager.shutdown()  # what Sanic's handler did (after a __TERMINATE__, again: a no-op)
    manager.join()
    manager.terminate()
    manager.cleanup()


def wait_serving(manager):
    """Until each live worker serves (has its signal handlers), or SERVING."""
    deadline = time.monotonic() + SERVING
    while time.monotonic() < deadline and any(
        process.is_alive() and not manager.worker_state.get(process.name, {}).get("serving")
        for process in manager.transient_processes
    ):
        time.sleep(0.05)


def stop_outside_signal_handler():
    """Every WorkerManager made from now on stops so."""
    WorkerManager.shutdown_signal = shutdown_signal
    WorkerManager.run = run
