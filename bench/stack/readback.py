"""What really runs, read back from the running server rather than taken
from what was asked: its worker processes (the process tree's leaves, less
multiprocessing's helpers), the OS threads of each, and gunicorn's worker
class as its log states it (GUNICORN_CMD_ARGS=--threads turns a sync worker
into gthread without a word elsewhere)."""

import contextlib
import re
from pathlib import Path

from bench.stack.processes import process_tree

HELPERS = ("resource_tracker", "semaphore_tracker", "forkserver")  # not workers
WORKER_CLASS = re.compile(r"Using worker: (\S+)")


def parent(pid):
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


def helper(pid):
    with contextlib.suppress(OSError):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        return any(name in command for name in HELPERS)
    return True  # gone


def listening_sockets():
    """The inodes of every listening TCP socket of the machine."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":  # TCP_LISTEN
                    inodes.add(fields[9])
    return inodes


def listens(pid, inodes):
    """Whether process pid holds one of these listening sockets."""
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return True
    return False


def worker_pids(pid):
    """The processes that serve requests: the leaves of pid's tree that hold
    a listening socket (pid itself when it forks none). Sanic's manager
    spawns one more process than it has workers; multiprocessing its trackers."""
    tree = [p for p in process_tree(pid) if not helper(p)]
    parents = {parent(p) for p in tree}
    leaves = [p for p in tree if p not in parents]
    inodes = listening_sockets()
    return [p for p in leaves if listens(p, inodes)] or leaves or [pid]


def os_threads(pid):
    """The OS threads process pid runs now (0 if it is gone)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def most_threads(pid):
    """The most OS threads any worker of pid's tree runs now."""
    return max((os_threads(p) for p in worker_pids(pid)), default=0)


def worker_class(log_path):
    """The worker class gunicorn says it uses, from its log; None for others."""
    with contextlib.suppress(OSError):
        found = WORKER_CLASS.search(Path(log_path).read_text(errors="replace"))
        return found and found.group(1).rsplit(".", 1)[-1]
    return None
