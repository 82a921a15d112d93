#!/bin/sh
# Sanic in production: Sanic's own server (uvloop, its worker manager). The one
# command that serves this app, for benchmark.sh, the tests and compose.yaml alike.
#
# Workers: one per core, each an event loop with its own app and pool (opened
# in before_server_start). No --dev: no debug, no auto-reload.
set -eu
# The app's settings first (common/settings.py): one it cannot use is one line
# on stderr and exit 2, before a server prints a traceback per worker.
python3 -m common.settings
# On SIGTERM, 5 s for the requests in flight (Sanic's default is 15), as under
# the other apps' servers.
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
