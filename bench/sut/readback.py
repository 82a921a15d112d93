"""What really runs, read back from the running server rather than taken
from what was asked: its worker processes (the process tree's leaves, less
multiprocessing's helpers), the OS threads of each, and gunicorn's worker
class as its log states it (GUNICORN_CMD_ARGS=--threads turns a sync worker
into gthread without a word elsewhere: its log says which ran)."""

import contextlib
import re
from pathlib import Path

from infra import procfs

HELPERS = ("resource_tracker", "semaphore_tracker", "forkserver")  # not workers
WORKER_CLASS = re.compile(r"Using worker: (\S+)")


def helper(pid):
    """Whether pid is one of multiprocessing's helpers (or gone)."""
    command = procfs.cmdline(pid)
    return command is None or any(name in " ".join(command) for name in HELPERS)


def worker_pids(pid):
    """The processes that serve requests: the leaves of pid's tree that hold
    a listening socket (pid itself when it forks none). Sanic's manager
    spawns one more process than it has workers; multiprocessing its trackers."""
    stats = {each.pid: each for each in procfs.every_stat()}
    tree = [p for p in procfs.tree(pid, stats.values()) if not helper(p)]
    parents = {stats[p].parent for p in tree if p in stats}
    leaves = [p for p in tree if p not in parents]
    inodes = procfs.listening_sockets()
    return [p for p in leaves if procfs.listens(p, inodes)] or leaves or [pid]


def os_threads(pid):
    """The OS threads process pid runs now (0 if it is gone)."""
    return procfs.status_field(pid, "Threads") or 0


def most_threads(pid):
    """The most OS threads any worker of pid's tree runs now."""
    return max((os_threads(p) for p in worker_pids(pid)), default=0)


def worker_class(log_path):
    """The worker class gunicorn says it uses, from its log; None for others."""
    with contextlib.suppress(OSError):
        found = WORKER_CLASS.search(Path(log_path).read_text(errors="replace"))
        return found and found.group(1).rsplit(".", 1)[-1]
    return None
