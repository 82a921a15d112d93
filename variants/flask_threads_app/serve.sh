#!/bin/sh
# Flask with a thread pool for its calls out, served as flask_app/serve.sh serves
# Flask, for the same reasons (its comments): gunicorn, one process per core, 16
# threads each. A request holds its thread; its calls out run in threads of
# their own (ratings.py).
set -eu
# The app's settings first (common/settings.py): one it cannot use is one line
# on stderr and exit 2, before a server prints a traceback per worker.
python3 -m common.settings
exec gunicorn 'flask_threads_app:create_app()' \
    --bind "${HOST:-127.0.0.1}:${PORT:-8000}" \
    --workers "${WEB_WORKERS:-$(nproc)}" \
    --worker-class gthread \
    --config python:common.gthread \
    --threads "${WEB_THREADS:-16}" \
    --graceful-timeout 5 \
    --limit-request-fields 6000 \
    --no-control-socket
