#!/usr/bin/env bash
# Run the test suite. First every system tool the tests run (wrk, nginx,
# PgBouncer, Docker, ...: scripts/system.sh's table), installed where missing
# or refused in one line; then, into .venv, the pinned dependencies, every
# extra the benchmark installs when it needs it (requirements-*.txt), the
# test-only tools (requirements-dev.txt) and what the migration guide's
# examples use (requirements-examples.txt). The tests start a throwaway
# Postgres unless TEST_DATABASE_URL is set (never DATABASE_URL), and run every
# app under its production server. Extra arguments go to pytest, e.g.
# ./test.sh -k flask
set -Eeuo pipefail
cd "$(dirname "$0")"
bash scripts/system.sh --all
# Every tool is here now: a test that finds one missing fails instead of
# skipping (tests/system_tools.py).
export SYSTEM_TOOLS=installed
# Checkov, in a venv of its own: its pins cannot share .venv's
# (requirements-scanners.txt says why; tests/deploy/test_scanners.py runs it).
# Made beside .venv, at once: each install waits on downloads more than on a
# core (36 s and 43 s alone, the longer of them together).
VENV_DIR=.venv-scanners bash scripts/venv.sh requirements-scanners.txt &
scanners=$!
bash scripts/venv.sh requirements.txt requirements-servers.txt requirements-charts.txt \
    requirements-openloop.txt requirements-profile.txt requirements-dev.txt \
    requirements-examples.txt || { kill "$scanners" 2>/dev/null; exit 1; }
wait "$scanners"
# Bytecode cached, in .venv, not beside the sources, even where the environment
# says not to write it (PYTHONDONTWRITEBYTECODE): without it every run compiles
# the project again and pytest rewrites every test module's asserts, seconds
# of the fast tier, and every server a test starts compiles its app.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/.venv/pycache"
.venv/bin/ruff check .
# Arguments, or a database of yours for the tests (which two pytests could
# not share): one pytest.
if (($#)) || [[ -n "${TEST_DATABASE_URL:-}" ]]; then
    exec .venv/bin/python -m pytest "$@"
fi
# The whole suite, in two steps. First, two pytests side by side: one runs
# the tests marked `beside` (tests/conftest.py): those that run Docker (image
# builds, containers, Swarm, and the namespaces Docker's iptables rules would
# cut), which wait on downloads and containers more than on a core, then the
# reliability tests, mostly once the other pytest has ended; the other runs
# the contract, deploy and docs tests, and the harness tests that measure
# neither CPU nor time (what a run writes and leaves, the registry, charts,
# the explorer, venvs, the embedded Postgres). Then the other harness tests,
# which do, with the machine to themselves.
status=0
beside_log="$(mktemp)"
beside_tmp="$(mktemp -d)"
beside_pid=
# The tests beside stop as a Ctrl-C stops them (the Docker tests' fixtures
# take the stack down and stop the daemon they started): a Ctrl-C reaches
# them with the rest; a SIGTERM to this script, or its end, sends them one.
# Their output (its own temporary folder) is printed once they have ended.
beside_ended() {
    if [[ -n "$beside_pid" ]]; then
        [[ -z "$1" ]] || kill "-$1" "$beside_pid" 2>/dev/null || true
        wait "$beside_pid" || status=1
        beside_pid=
        cat "$beside_log"
    fi
}
trap 'beside_ended INT; rm -rf "$beside_log" "$beside_tmp"' EXIT
trap 'beside_ended ""; exit 130' INT
trap 'exit 143' TERM
# A background job ignores Ctrl-C unless told otherwise.
(
    trap - INT
    export TEST_DATABASE_NAME=dvdrental_beside
    exec .venv/bin/python -m pytest -m beside --basetemp "$beside_tmp/pytest"
) >"$beside_log" 2>&1 &
beside_pid=$!
alongside=(tests/contract tests/deploy tests/docs)
alongside+=(tests/harness/test_{bench_data_safety,registry,charts,explorer_browser}.py)
alongside+=(tests/harness/test_{results_folder,venv,embedded}.py)
.venv/bin/python -m pytest -m "not beside" "${alongside[@]}" || status=1
beside_ended ""
.venv/bin/python -m pytest -m "not beside" "${alongside[@]/#/--ignore=}" || status=1
exit "$status"
