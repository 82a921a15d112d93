#!/bin/sh
# Quart in production: uvicorn, uvloop workers. The one command that serves this
# app, for benchmark.sh, the tests and compose.yaml alike.
#
# Workers: one per core, each an event loop with its own app and pool (opened
# in before_serving: lifespan on). Why uvicorn, and each option: docs/migration.md.
# Its HTTP protocol is httptools', refusing past capacity before it parses a
# request (common/uvicorn_protocol.py).
set -eu
# The app's settings first (common/settings.py): one it cannot use is one line
# on stderr and exit 2, before a server prints a traceback per worker.
python3 -m common.settings
exec uvicorn quart_app:create_app --factory \
    --host "${HOST:-127.0.0.1}" \
    --port "${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$(nproc)}" \
    --loop uvloop \
    --http common.uvicorn_protocol:Admitting \
    --lifespan on \
    --ws none \
    --timeout-graceful-shutdown 5 \
    --no-access-log
