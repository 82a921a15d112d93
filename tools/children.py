"""Stopping a child process the way every part of the project does: the
app servers (tools/serve.py), nginx (tools/proxy.py) and the benchmark's delay
proxy (bench/sut/delay_proxy.py)."""

import contextlib
import os
import signal
import subprocess


def stop(process, graceful=signal.SIGTERM, timeout=10.0):
    """Send graceful (the child's own shutdown signal: SIGTERM as docker stop
    does, SIGQUIT for nginx), wait up to timeout seconds, then SIGKILL whatever
    is left of its process group: a master's workers too. The child must have
    been started with start_new_session=True (a group of its own), so that the
    SIGKILL cannot reach this process."""
    if process.poll() is None:
        process.send_signal(graceful)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
    with contextlib.suppress(ProcessLookupError):  # the group is empty: all stopped
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
