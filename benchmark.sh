#!/usr/bin/env bash
# Measure the apps, or serve one. See usage(); the measuring is bench/ (Python).
set -Eeuo pipefail
cd "$(dirname "$0")"

usage() {
    cat <<'USAGE'
Usage:
  ./benchmark.sh APP... [options]          measure apps (APP: flask, quart, sanic, falcon, all)
  ./benchmark.sh APP --target URL          measure a server that is already running
  ./benchmark.sh --serve APP [--port N] [--proxy]
                                          serve APP until Ctrl-C (--proxy: behind nginx)
  ./benchmark.sh --help                    every option

Uses DATABASE_URL if set, else a throwaway Postgres in .pgdata/. A run writes
reviews to a film of its own only, and removes both when it ends: no other row
is written or deleted.
Results: results/ (JSON, Markdown, PNG chart, logs).
USAGE
}

if (($# == 0)); then
    usage >&2
    exit 2
fi
# A Ctrl-C before Python takes over: the step it stops (apt-get, pip) is in
# this process group and stops too, quietly; this says so in Python's words.
trap 'echo "interrupted: everything started was stopped" >&2; exit 130' INT
# Each Python step starts with SIGINT, SIGTERM and SIGHUP blocked (GNU env;
# elsewhere, as they come): one that comes while its modules load is held,
# neither lost (a module's bare `except:`) nor raised where nothing catches
# it (a traceback), and delivered once the step can stop cleanly.
held=()
if env --block-signal=INT true 2>/dev/null; then
    held=(env --block-signal=INT --block-signal=TERM --block-signal=HUP)
fi
# Before any pip, the system tools these options need (bench/preflight.py,
# the standard library alone, -S: no site-packages): installed, or refused in
# one line.
${held[@]+"${held[@]}"} python3 -S -m bench.preflight "$@"
if [[ "$1" == "--serve" ]]; then
    shift
    bash scripts/venv.sh
    # tools/serve.py reads and checks the rest (one line, exit 2, if wrong),
    # and stops what it started on Ctrl-C, SIGTERM or SIGHUP.
    command=(-m tools.serve)
else
    # Every measuring run draws its charts: their stack comes in the same pip
    # call as the apps' (scripts/venv.sh), not in a second one at its end.
    bash scripts/venv.sh requirements.txt requirements-charts.txt
    # Python owns every process it starts from here, and stops them on exit,
    # Ctrl-C (SIGINT), SIGTERM or SIGHUP.
    command=(-m bench)
fi
# Untrapped first: a Ctrl-C the trap caught as exec replaced this shell would
# be lost, and the run would go on.
trap - INT
exec ${held[@]+"${held[@]}"} .venv/bin/python "${command[@]}" "$@"
