#!/bin/sh
# The bench service's entrypoint (compose.yaml):
#
#     docker compose run --rm bench APP [./benchmark.sh options]
#
# measures APP's container, already running in the stack, with ./benchmark.sh
# --target: the same wrk scripts and report as a local run. With the database
# URL it also measures pgbench's ceiling and checks that no review was lost;
# the reviews it writes go to a film of its own, removed with them at its end
# (docs/benchmark.md: no other row is written or deleted).
#
# The password of DATABASE_URL's role comes from DATABASE_PASSWORD_FILE (a
# Docker secret): written into a libpq passfile of mode 600 on the container's
# tmpfs, which psycopg2 and pgbench read (never a URL or a command line).
#
# WRITE_TOKEN_FILE, when the stack has a write token (the Docker secret
# write_token): ./benchmark.sh reads it, and every write the run sends
# carries it (--write-token-file). APP's container does not ask for it; the
# door in front of it does, where a run is pointed at the door instead
# (docs/docker.md). Where the file is not there (a Kubernetes Secret without
# the key), the stack has none: not passed.
set -eu
if [ -n "${WRITE_TOKEN_FILE:-}" ] && [ ! -e "$WRITE_TOKEN_FILE" ]; then
    unset WRITE_TOKEN_FILE
fi
if [ -n "${DATABASE_PASSWORD_FILE:-}" ]; then
    if [ ! -r "$DATABASE_PASSWORD_FILE" ]; then
        echo "cannot read DATABASE_PASSWORD_FILE $DATABASE_PASSWORD_FILE" >&2
        exit 2
    fi
    umask 077
    PGPASSFILE="$(mktemp)"
    # host:port:database:user:password, a colon or backslash escaped.
    printf '*:*:*:*:%s\n' "$(head -n 1 "$DATABASE_PASSWORD_FILE" | sed 's/[\\:]/\\&/g')" \
        > "$PGPASSFILE"
    export PGPASSFILE
fi
app="${1:?usage: docker compose run --rm bench APP [options], APP: flask, quart, sanic or falcon}"
shift
exec ./benchmark.sh "$app" --target "http://$app:8000" --database-url "$DATABASE_URL" "$@"
