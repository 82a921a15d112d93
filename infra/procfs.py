"""Linux's /proc, read in one place: a process's parent, CPU time, threads,
memory (PSS) and command line, its tree of descendants, the sockets it
listens on, the machine's connections to a port, and the machine's idle
time. Every reader returns None (or an empty answer) for a process that has
gone, or is not ours to read: processes come and go while a run reads them."""

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")  # the clock ticks of /proc's CPU times, per second


@dataclass(frozen=True)
class Stat:
    """What /proc/PID/stat says of a process that this project reads."""

    pid: int
    parent: int
    cpu_seconds: float  # utime + stime: user and system time, this process's threads
    group: int = 0  # its process group (a server started in a session of its own leads one)
    # cutime + cstime: its children's that have exited and been waited for (and theirs)
    reaped_cpu_seconds: float = 0.0
    name: str = ""  # its command name (comm: the executable's, at most 15 characters)
    system_seconds: float = 0.0  # stime: the part of cpu_seconds spent in the kernel


def stat(pid):
    """The Stat of pid, or None. The command name, in parentheses, may hold
    spaces and parentheses itself: the fields are read after its last ')'."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        head, tail = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)
        fields = tail.split()
        cpu = (int(fields[11]) + int(fields[12])) / TICKS
        reaped = (int(fields[13]) + int(fields[14])) / TICKS
        name = head.partition("(")[2]
        system = int(fields[12]) / TICKS
        return Stat(int(pid), int(fields[1]), cpu, int(fields[2]), reaped, name, system)
    return None


def every_stat():
    """The Stat of every process there is now."""
    found = (stat(path.name) for path in PROC.iterdir() if path.name.isdigit())
    return [each for each in found if each is not None]


def tree(pid, stats=None):
    """pid and all its descendants (stats: every_stat(), when already read)."""
    children = {}
    for each in stats if stats is not None else every_stat():
        children.setdefault(each.parent, []).append(each.pid)
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def cpu_seconds(*pids):
    """The CPU time used so far by these processes and all their descendants
    (those that have exited and been reaped count in their parent's cstime,
    which is not read: read the tree while it runs)."""
    stats = every_stat()
    by_pid = {each.pid: each for each in stats}
    seen = {each for pid in pids if pid is not None for each in tree(pid, stats)}
    return sum(by_pid[each].cpu_seconds for each in seen if each in by_pid)


def machine_idle_seconds():
    """(the time every core has spent not running this machine's processes,
    the cores counted), from /proc/stat: idle, iowait, and steal (time the
    hypervisor gave another machine). A window's busy time is then its wall
    time x cores less the idle time it gained. /proc/stat's busy fields
    (user, system...) are not read: the kernel samples them at each clock
    tick, and with the tick stopped on an idle core a burst shorter than a
    tick (a process woken for a millisecond at a time) is never sampled,
    while its idle time is measured exactly, as each process's own CPU time is."""
    lines = (PROC / "stat").read_text().splitlines()
    fields = every_core(lines)
    idle, iowait, steal = fields[3], fields[4], fields[7]
    cores = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    return (idle + iowait + steal) / TICKS, cores


def every_core(lines):
    """/proc/stat's first line, every core's ticks: user, nice, system, idle,
    iowait, irq, softirq, steal, ..."""
    return [int(value) for value in lines[0].split()[1:]]


def machine_interrupt_seconds():
    """The time every core has spent handling interrupts (irq and softirq,
    /proc/stat, sampled at each tick). Without the kernel's irq time
    accounting, one handled while a process ran is charged to it as well;
    one handled on an idle core is charged to no process: the busy time no
    process's count shows (a network's packets, taken on the idle core)."""
    fields = every_core((PROC / "stat").read_text().splitlines())
    return (fields[5] + fields[6]) / TICKS


def status_field(pid, name):
    """The value of a line of /proc/PID/status ("Threads", "VmRSS"), or None."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1])
    return None


def pss_kib(pid):
    """The Pss: line of pid's smaps_rollup in KiB; None when the process has
    vanished, is not ours to read, or has no memory of its own (a kernel thread)."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return None


def cmdline(pid):
    """pid's command line as a list of words, or None."""
    with contextlib.suppress(OSError):
        raw = (PROC / str(pid) / "cmdline").read_bytes()
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    return None


def environ(pid):
    """pid's environment as it was started, raw (NAME=VALUE, NUL between), or
    b"" (nginx and Postgres write their titles over it)."""
    with contextlib.suppress(OSError):
        return (PROC / str(pid) / "environ").read_bytes()
    return b""


def listening_sockets():
    """The inodes of every listening TCP socket of the machine."""
    inodes = set()
    for table in ("net/tcp", "net/tcp6"):
        with contextlib.suppress(OSError):
            for line in (PROC / table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":  # TCP_LISTEN
                    inodes.add(fields[9])
    return inodes


def listens(pid, inodes):
    """Whether process pid holds one of these listening sockets."""
    with contextlib.suppress(OSError):
        for fd in (PROC / str(pid) / "fd").iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return True
    return False


# TCP states of a socket whose owner still holds it open (ESTABLISHED; CLOSE_WAIT:
# the peer has closed, this side not yet), in /proc/net/tcp's hex.
HELD = {"01", "08"}


def connections_to(port):
    """How many TCP sockets of this machine are connected to `port` (on any
    address) and still held open by their process: a client's connections."""
    count = 0
    for table in ("net/tcp", "net/tcp6"):
        with contextlib.suppress(OSError):
            for line in (PROC / table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] in HELD and int(fields[2].rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count
