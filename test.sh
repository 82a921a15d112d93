#!/usr/bin/env bash
# Run the test suite: installs the pinned dependencies, every extra the
# benchmark installs when it needs it (requirements-*.txt), the test-only
# tools (requirements-dev.txt) and what the migration guide's examples use
# (requirements-examples.txt) into .venv, starts a throwaway Postgres unless
# DATABASE_URL is set, and runs every app under its production server. Extra
# arguments go to pytest, e.g. ./test.sh -k flask
set -Eeuo pipefail
cd "$(dirname "$0")"
bash scripts/venv.sh requirements.txt requirements-servers.txt requirements-charts.txt \
    requirements-openloop.txt requirements-dev.txt requirements-examples.txt
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
