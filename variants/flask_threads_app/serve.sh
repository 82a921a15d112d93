#!/bin/sh
# Flask with threads for its calls out, served as flask_app/serve.sh serves
# Flask, for the same reasons (its comments): gunicorn, sync workers, 2 x cores
# + 1. A sync worker still serves one request at a time; its calls out run in
# threads of their own (ratings.py).
set -eu
exec gunicorn 'flask_threads_app:create_app()' \
    --bind "${HOST:-127.0.0.1}:${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$((2 * $(nproc) + 1))}" \
    --worker-class sync \
    --graceful-timeout 5 \
    --limit-request-fields 6000 \
    --no-control-socket
