#!/bin/sh
# Sanic in production: Sanic's own server (uvloop, its worker manager). The one
# command that serves this app, for benchmark.sh, the tests and compose.yaml alike.
#
# Why this many workers: an async worker keeps serving while it waits for
# Postgres, so one process per core keeps the CPUs busy (Sanic's own advice);
# each calls create_app() and opens its own pool. Access logs (a line per
# request) and the startup banner are off; debug and auto-reload stay off (no
# --dev). On SIGTERM the manager stops its workers, which close their pools,
# within 5 seconds (Sanic's default is 15), like the other apps' gunicorn.
set -eu
export SANIC_GRACEFUL_SHUTDOWN_TIMEOUT=5
# A request head of up to 16 KB (Sanic's maximum; 8 KB by default), near
# nginx's 17 KB (api.inc): what Sanic still refuses is a 431 in JSON.
export SANIC_REQUEST_MAX_HEADER_SIZE=16384
exec sanic sanic_app:create_app --factory \
    --host "${HOST:-127.0.0.1}" \
    --port "${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$(nproc)}" \
    --no-access-logs \
    --no-motd
