#!/bin/sh
# Quart in production: uvicorn, uvloop workers. The one command that serves this
# app, for benchmark.sh, the tests and compose.yaml alike.
#
# Why this many workers: an async worker keeps serving while it waits for
# Postgres, so one process per core keeps the CPUs busy; each calls
# create_app() and opens its own pool in before_serving (ASGI lifespan, on).
# Why uvicorn rather than Hypercorn, Quart's own server: uvicorn's manager
# replaces a worker that dies (a dead Hypercorn worker stops the whole server,
# with status 0), and on SIGTERM its workers finish the requests in flight
# (Hypercorn's dropped them here), close their pools and exit within 5 seconds,
# like the other apps' servers. It also took less CPU per request here:
# httptools parses HTTP in C, Hypercorn's h11 in Python. Access log off.
# No WebSocket (--ws none): the API has none, and a GET that asks to upgrade is
# served as the plain GET it also is, as in the other apps (RFC 9110, 7.8).
set -eu
exec uvicorn quart_app:create_app --factory \
    --host "${HOST:-127.0.0.1}" \
    --port "${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$(nproc)}" \
    --loop uvloop \
    --http httptools \
    --lifespan on \
    --ws none \
    --timeout-graceful-shutdown 5 \
    --no-access-log
