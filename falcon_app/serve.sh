#!/bin/sh
# Falcon in production: gunicorn, gthread workers. The one command that serves this
# app, for benchmark.sh, the tests and compose.yaml alike.
#
# Workers: one per core, 16 threads each, each its own app and pool: what
# --tune chose by capacity at p99 <= 100 ms (docs/results.md, "What ships").
# --limit-request-fields: more than nginx passes on (docs/contract.md).
# --config python:common.gthread: each request's time in the worker's queue,
# which the app's admission reads (common/admission.py).
set -eu
# The app's settings first (common/settings.py): one it cannot use is one line
# on stderr and exit 2, before a server prints a traceback per worker.
python3 -m common.settings
exec gunicorn 'falcon_app:get_app()' \
    --bind "${HOST:-127.0.0.1}:${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$(nproc)}" \
    --worker-class gthread \
    --config python:common.gthread \
    --threads "${WEB_THREADS:-16}" \
    --graceful-timeout 5 \
    --limit-request-fields 6000 \
    --no-control-socket
