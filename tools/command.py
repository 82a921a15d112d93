"""What the project's long-running commands (./benchmark.sh, its --serve mode)
do alike: refuse a bad option value in one line, and stop everything they
started whatever signal ends them."""

import argparse
import os
import signal
import sys

from infra.signals import STOPPING

# str.splitlines() breaks at each of these: escaped, a message stays one line.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# The one line a stop by any of them ends in, whenever it comes (benchmark.sh
# says it too, before Python runs).
INTERRUPTED = "interrupted: everything started was stopped"


def one_line(text):
    """text with its line breaks escaped (a value given may hold some)."""
    return text.translate({ord(char): repr(char)[1:-1] for char in LINE_BREAKS})


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal is one line on stderr and exit 2:
    argparse's own prints the usage first, a dozen lines above the reason."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {one_line(message)} (--help lists every option)\n")


def stop_on_signals():
    """From now on SIGTERM and SIGHUP end this process as Ctrl-C does, by
    KeyboardInterrupt, so that every with block and ExitStack on the way out
    stops what it started. Only the first of these signals does: a later one
    (Ctrl-C pressed twice; a closed terminal, whose SIGHUP comes from the
    kernel and again from the shell) would cut that cleanup short and leave
    processes behind, so it is ignored. After SIGHUP, output goes nowhere: the
    terminal it was written to is gone, and a write to it would fail."""

    def stop(signum, frame):
        for each in STOPPING:
            # A handler, not SIG_IGN: what the cleanup starts (pg_ctl stop)
            # must not inherit an ignored signal.
            signal.signal(each, ignore)
        if signum == signal.SIGHUP:
            silence()
        raise KeyboardInterrupt

    for each in STOPPING:
        signal.signal(each, stop)
    # benchmark.sh starts Python with them blocked, so that one that comes
    # while the modules load is held: it is delivered here, now that it stops
    # the run cleanly (the caller's try sees the KeyboardInterrupt).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)


def ignore(signum, frame):
    """A signal that comes while everything started is being stopped."""


def silence():
    """stdout and stderr to /dev/null, at the descriptor level (children too)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass  # what was buffered for the closed terminal is lost anyway
        os.dup2(devnull, stream.fileno())
    os.close(devnull)
