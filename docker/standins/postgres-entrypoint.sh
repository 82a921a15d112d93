#!/bin/sh
# The postgres stand-in's entrypoint (postgres.Dockerfile): the part of the
# official image's contract that compose.yaml relies on.
#
#   POSTGRES_PASSWORD   required (unless POSTGRES_HOST_AUTH_METHOD=trust): the
#                       password of POSTGRES_USER, asked over TCP (scram-sha-256)
#   POSTGRES_PASSWORD_FILE  a file holding it instead (a Docker secret)
#   POSTGRES_USER       the superuser (default postgres)
#   POSTGRES_DB         created on first start (default: POSTGRES_USER)
#   /docker-entrypoint-initdb.d/*.sql, *.sh
#                       run once, in name order, when $PGDATA is empty, on a
#                       temporary server that listens on the Unix socket only
#                       (a TCP healthcheck stays unhealthy until they are done)
#
# Then Postgres replaces this script (exec) as PID 1, so it gets the stop
# signal itself. Run as root, it first hands $PGDATA to the postgres user.
set -eu

POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
export POSTGRES_USER POSTGRES_DB

# `docker run postgres:18.6 -c x=y` means postgres -c x=y.
if [ "${1#-}" != "$1" ]; then
    set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
    exec "$@"
fi

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    chown -R postgres:postgres "$(dirname "$PGDATA")"
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

psql_init() {
    psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" "$@"
}

init_database() {
    auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
        POSTGRES_PASSWORD="$(head -n 1 "$POSTGRES_PASSWORD_FILE")"
    fi
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
        echo "error: POSTGRES_PASSWORD is not set (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
        exit 1
    fi
    pwfile="$(mktemp)"
    printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host="$auth" >/dev/null
    rm -f "$pwfile"
    printf 'host all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"
    printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"

    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        echo 'CREATE DATABASE :"db";' | psql_init --dbname postgres -q --set db="$POSTGRES_DB"
    fi
    for file in /docker-entrypoint-initdb.d/*; do
        case "$file" in
            *.sql) echo "running $file" && psql_init --dbname "$POSTGRES_DB" -q -f "$file" ;;
            *.sh) echo "running $file" && . "$file" ;;
            *) if [ -e "$file" ]; then echo "ignoring $file"; fi ;;
        esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "init done: starting the server"
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    init_database
fi
exec "$@"
