#!/bin/sh
# Flask in production: gunicorn, sync workers. The one command that serves this
# app, for benchmark.sh, the tests and compose.yaml alike.
#
# Why sync workers, and this many: a sync worker serves one request at a time
# and spends most of it waiting for Postgres, so it takes more processes than
# cores to keep the CPUs busy; 2 x cores + 1 is gunicorn's own advice. Threads
# (gthread) add GIL contention and measured slower here (see docs/results.md).
#
# --limit-request-fields: gunicorn refuses more than 100 header fields by
# default, as HTML, where nginx takes 1,000 and the other servers bound a head
# by its size only. 6,000 is more than nginx's buffers hold (1 KB + 4 x 4 KB
# of 3-byte fields): no count nginx takes is refused here (docs/contract.md).
set -eu
exec gunicorn 'flask_app:create_app()' \
    --bind "${HOST:-127.0.0.1}:${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" \
    --worker-class sync \
    --graceful-timeout 5 \
    --limit-request-fields 6000 \
    --no-control-socket
