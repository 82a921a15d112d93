"""The upstream as a process of its own, for whoever starts it for a while
(the tests; the benchmark, for a run):

    with launched([9001, 9002], "50ms~10ms", log) as upstream:
        upstream.urls   # UPSTREAM_FANOUT's base URLs, one per port
        upstream.stats()

It is stopped (SIGTERM, then SIGKILL) when the block ends, whatever ends it.
"""

import contextlib
import json
import select
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

from infra import ROOT
from tools import children

LISTENING = "upstream listening on "


class UpstreamNotStarted(RuntimeError):
    """It exited, or did not say it listens in time; the message has its output."""


@dataclass
class Upstream:
    urls: list  # one base URL per port, in the order given
    process: subprocess.Popen

    def stats(self):
        """Its GET /stats (upstream/server.py, Stats), asked on its first port."""
        with urllib.request.urlopen(f"{self.urls[0]}/stats", timeout=5) as response:
            return json.load(response)


@contextlib.contextmanager
def launched(ports, delay="0", log=None, host="127.0.0.1", timeout=10.0):
    """python -m upstream on ports (0: a free one) with delay; what it says on
    stderr (that it saturates, or why it cannot start) to log, a file open for
    writing, or to a temporary file read back if it does not start."""
    command = [sys.executable, "-m", "upstream", "--host", host, "--delay", str(delay)]
    command += [f"--port={','.join(map(str, ports))}"]
    with contextlib.ExitStack() as cleanup:
        errors = log if log is not None else cleanup.enter_context(tempfile.TemporaryFile("w+"))
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.PIPE,  # its one line: where it listens
            stderr=errors,
            text=True,
            start_new_session=True,  # its own group: children.stop() cannot reach this one
        )
        cleanup.callback(process.stdout.close)
        cleanup.callback(children.stop, process)
        yield Upstream(listening(process, errors, timeout), process)


def listening(process, errors, timeout):
    """The URLs of its "listening" line, once printed; UpstreamNotStarted if it
    exits first or says nothing in time."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if select.select([process.stdout], [], [], left)[0]:
            line = process.stdout.readline()
            if line.startswith(LISTENING):
                return line[len(LISTENING) :].split(" (")[0].split()
            if not line:  # it closed its output: it exited
                break
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(1)  # its last words written
    raise UpstreamNotStarted(f"the upstream did not start: {said(errors)}")


def said(errors):
    """The end of what it wrote to errors, if that can be read back."""
    with contextlib.suppress(OSError, ValueError):
        errors.flush()
        errors.seek(0)
        return errors.read()[-2000:].strip() or "it said nothing"
    return "see its log"
