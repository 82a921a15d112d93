"""The signals that stop the project's commands, and a block they cannot cut
short."""

import contextlib
import signal
import threading

# SIGINT: Ctrl-C; SIGTERM: kill, docker stop; SIGHUP: the terminal closed.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def held():
    """Run the block to its end whatever STOPPING signal comes meanwhile, and
    deliver those that came when it ends: for a step that, cut half-way, would
    leave something running (the embedded Postgres's stop). Only the main
    thread may change the handlers: in another, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    previous = {each: signal.getsignal(each) for each in STOPPING}
    held_here = [each for each, handler in previous.items() if handler is not None]
    for each in held_here:  # None: a handler not set from Python, left as it is
        signal.signal(each, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        for each in held_here:
            signal.signal(each, previous[each])
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)
