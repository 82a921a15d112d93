"""The memory an app uses: the proportional set size (PSS) of its whole process
tree, from /proc/PID/smaps_rollup (infra/procfs.py).

Why PSS and not RSS: a server forks its workers after importing the app, so
they share most of their pages with the master and with each other. RSS
counts a shared page in full in every process that maps it, so adding up the
workers' RSS counts the interpreter and the framework once per worker; PSS
splits each shared page among the processes that map it, so the tree's PSS
adds up to the memory the app really holds."""

from infra.procfs import pss_kib, tree


def pss_mib(*pids):
    """The PSS of these processes and all their descendants in MiB (every copy
    of an app's server: --replicas); None when none of them could be read (no
    pid, or the server is gone)."""
    found = [pss_kib(each) for pid in pids if pid is not None for each in tree(pid)]
    found = [kib for kib in found if kib is not None]
    return sum(found) / 1024 if found else None
