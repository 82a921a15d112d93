#!/bin/sh
# Flask in production: gunicorn, sync workers. The one command that serves this
# app, for benchmark.sh, the tests and compose.yaml alike.
#
# Why sync workers, and this many: a sync worker serves one request at a time
# and spends most of it waiting for Postgres, so it takes more processes than
# cores to keep the CPUs busy; 2 x cores + 1 is gunicorn's own advice. Threads
# (gthread) add GIL contention and measured slower here (see docs/results.md).
set -eu
exec gunicorn 'flask_app:create_app()' \
    --bind "${HOST:-127.0.0.1}:${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" \
    --worker-class sync \
    --graceful-timeout 5 \
    --no-control-socket
