#!/usr/bin/env bash
# Run the test suite: installs the pinned dependencies and the test-only tools
# (requirements-dev.txt) into .venv, starts a throwaway Postgres unless
# DATABASE_URL is set, and runs every app under its production server. Extra
# arguments go to pytest, e.g. ./test.sh -k flask
set -Eeuo pipefail
cd "$(dirname "$0")"
bash scripts/venv.sh
bash scripts/venv.sh requirements-dev.txt
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
