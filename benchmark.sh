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
if [[ "$1" == "--serve" ]]; then
    # Before any pip, nginx for --proxy: installed, or refused in one line.
    python3 -m bench.preflight "$@"
    shift
    bash scripts/venv.sh
    # tools/serve.py reads and checks the rest (one line, exit 2, if wrong),
    # and stops what it started on Ctrl-C, SIGTERM or SIGHUP.
    exec .venv/bin/python -m tools.serve "$@"
fi
# Before any pip, the system tools these options need (bench/preflight.py,
# the standard library alone): installed, or refused in one line.
python3 -m bench.preflight "$@"
# Every measuring run draws its charts: their stack comes in the same pip call
# as the apps' (scripts/venv.sh), not in a second one at the end of the run.
bash scripts/venv.sh requirements.txt requirements-charts.txt
# Python owns every process it starts from here, and stops them on exit,
# Ctrl-C (SIGINT) or SIGTERM.
exec .venv/bin/python -m bench "$@"
