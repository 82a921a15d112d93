"""The memory an app uses: the proportional set size (PSS) of its whole process
tree, from /proc/PID/smaps_rollup.

Why PSS and not RSS: a server forks its workers after importing the app, so
they share most of their pages with the master and with each other. RSS
counts a shared page in full in every process that maps it, so adding up the
workers' RSS counts the interpreter and the framework once per worker; PSS
splits each shared page among the processes that map it, so the tree's PSS
adds up to the memory the app really holds."""

import contextlib
from pathlib import Path

from bench.stack.processes import process_tree


def pss_kib(pid):
    """The Pss: line of pid's smaps_rollup in KiB; None when the process has
    vanished, is not ours to read, or has no memory of its own (a kernel thread)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return None


def pss_mib(*pids):
    """The PSS of these processes and all their descendants in MiB (every copy
    of an app's server: --replicas); None when none of them could be read (no
    pid, or the server is gone)."""
    tree = [each for pid in pids if pid is not None for each in process_tree(pid)]
    found = [kib for kib in map(pss_kib, tree) if kib is not None]
    return sum(found) / 1024 if found else None
