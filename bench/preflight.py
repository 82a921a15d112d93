"""The system tools a ./benchmark.sh command line needs (scripts/system.sh
knows each tool's package). benchmark.sh runs this before .venv exists, so
that a run which cannot go on stops before any pip. The run declares its own
(each mode's tools, bench/sut/lineup.py's tools_needed) and bench/cli.py
checks those again, installing nothing, for whoever runs python -m bench
directly: this says the same from the command line alone, and
tests/harness/test_system.py holds the two equal.

    python3 -m bench.preflight APP... [options]       # wrk, nginx, ... if missing
    python3 -m bench.preflight --serve APP [options]  # nginx for --proxy

The standard library alone, so it reads the command line with a scanner of
its own: the few options that need a tool, as bench/arguments.py and
tools/serve.py spell them (argparse, so --proxy=on and unique prefixes such
as --pgb read alike), everything else left to those parsers, which refuse a
bad value after. Exit status: 0, the run can go on; 1, refused (one
sentence on stderr, scripts/system.sh's).
"""

import argparse
import signal
import subprocess
import sys
from pathlib import Path

SYSTEM = Path(__file__).resolve().parent.parent / "scripts" / "system.sh"


class Scanner(argparse.ArgumentParser):
    """argparse reading only the options it knows, refusing nothing: a
    malformed line is the real parser's to refuse."""

    def __init__(self):
        super().__init__(add_help=False)

    def error(self, message):
        raise ValueError(message)

    def scan(self, argv):
        try:
            return self.parse_known_args(argv)[0]
        except ValueError:
            return None


def serving():
    """The options of tools/serve.py's command line that need a tool."""
    scanner = Scanner()
    scanner.add_argument("--proxy", action="store_true")
    return scanner


def measuring():
    """The options of bench/arguments.py's command line that need a tool, or
    say that none is needed (--help)."""
    scanner = Scanner()
    for option in ("--rate", "--proxy", "--replicas", "--pin", "--target"):
        scanner.add_argument(option)
    for flag in (["--pgbouncer"], ["-h", "--help"]):
        scanner.add_argument(*flag, action="store_true")
    return scanner


def needed_to_serve(argv):
    """nginx in front with --proxy."""
    known = serving().scan(argv)
    return ["nginx"] if known and known.proxy else []


def needed_to_measure(argv):
    """wrk for every closed-loop run (and --rate auto's peaks); nginx in front
    (--proxy but off, --replicas above 1) of the apps a run starts;
    PgBouncer; taskset to pin. --help needs none."""
    known = measuring().scan(argv)
    if known is None or known.help:
        return []
    copies = [int(part) for part in (known.replicas or "").split(",") if part.strip().isdigit()]
    needs = {
        "wrk": known.rate is None or known.rate.strip() == "auto",
        "nginx": not known.target
        and (known.proxy not in (None, "off") or max(copies, default=1) > 1),
        "pgbouncer": known.pgbouncer,
        "taskset": known.pin is not None,
    }
    return [tool for tool, needed in needs.items() if needed]


def tools_needed(argv):
    """The system tools ./benchmark.sh argv needs, by scripts/system.sh's names."""
    if argv[:1] == ["--serve"]:
        return needed_to_serve(argv[1:])
    return needed_to_measure(argv)


def missing(tools):
    """scripts/system.sh's sentence naming the tools of these this machine
    lacks, with the command that installs them; None when every one is
    there. Installs nothing."""
    completed = subprocess.run(
        ["bash", str(SYSTEM), "--check", *tools], capture_output=True, text=True
    )
    if completed.returncode == 0:
        return None
    return completed.stderr.strip() or f"scripts/system.sh failed ({completed.returncode})"


def main(argv=None):
    """Install what argv needs, or refuse; exit with the status above."""
    argv = sys.argv[1:] if argv is None else argv
    sys.exit(subprocess.run(["bash", str(SYSTEM), *tools_needed(argv)]).returncode)


if __name__ == "__main__":
    try:
        # benchmark.sh held a Ctrl-C while this loaded: delivered here, it ends
        # this quietly (scripts/system.sh, apt-get stop with it; benchmark.sh
        # says so, once).
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        main()
    except KeyboardInterrupt:
        sys.exit(130)
