#!/bin/sh
# PgBouncer's configuration from the environment, then PgBouncer itself as
# PID 1 (it gets the stop signal). Every database name is passed through to
# DB_HOST:DB_PORT.
#
#   DB_HOST, DB_PORT         the Postgres behind it (db, 5432)
#   DB_USER, DB_PASSWORD     the one user clients log in as; PgBouncer logs in
#                            to Postgres with the same (SCRAM over TCP)
#   POOL_MODE                transaction (default): a server connection is a
#                            client's only for one transaction; read the trap
#                            in docs/deploy.md before using it with asyncpg
#   DEFAULT_POOL_SIZE        server connections per database and user (20):
#                            what Postgres sees, whatever the client count
#   RESERVE_POOL_SIZE        more when clients wait over 3 s (5)
#   MAX_CLIENT_CONN          client connections accepted (2000)
#   LISTEN_ADDR, LISTEN_PORT where clients connect (0.0.0.0, 6432)
#   STATEMENT_TIMEOUT_MS     set on each server connection (5000), unless the
#                            server's own is stricter: the clients' startup
#                            settings cannot pass PgBouncer
set -eu

: "${DB_HOST:=db}" "${DB_PORT:=5432}" "${DB_USER:=postgres}"
: "${DB_PASSWORD:?DB_PASSWORD is not set}"
: "${POOL_MODE:=transaction}" "${DEFAULT_POOL_SIZE:=20}" "${RESERVE_POOL_SIZE:=5}"
: "${MAX_CLIENT_CONN:=2000}" "${STATEMENT_TIMEOUT_MS:=5000}"
: "${LISTEN_ADDR:=0.0.0.0}" "${LISTEN_PORT:=6432}"
case "$STATEMENT_TIMEOUT_MS" in
    '' | *[!0-9]*) echo "STATEMENT_TIMEOUT_MS must be a number of milliseconds" >&2; exit 2 ;;
esac

# What each server connection's session needs, whatever the server's defaults
# (ALTER DATABASE or ROLE ... SET): READ COMMITTED, which the apps' keyed write
# relies on, and STATEMENT_TIMEOUT_MS or the server's own timeout, whichever is
# stricter (0: none). The apps' PIN_SESSION (*_app/db.py), which they skip
# behind a pooler. Quotes doubled: the value is quoted in pgbouncer.ini.
pin_session="SELECT set_config(''default_transaction_isolation'', ''read committed'', false),\
 set_config(''statement_timeout'', coalesce(least(nullif(setting::int, 0),\
 nullif($STATEMENT_TIMEOUT_MS, 0)), 0)::text, false)\
 FROM pg_settings WHERE name = ''statement_timeout''"

dir="$(mktemp -d)"
umask 077
printf '"%s" "%s"\n' "$DB_USER" "$DB_PASSWORD" > "$dir/userlist.txt"
cat > "$dir/pgbouncer.ini" <<INI
[databases]
* = host=$DB_HOST port=$DB_PORT connect_query='$pin_session'

[pgbouncer]
listen_addr = $LISTEN_ADDR
listen_port = $LISTEN_PORT
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
admin_users = $DB_USER
stats_users = $DB_USER
pool_mode = $POOL_MODE
default_pool_size = $DEFAULT_POOL_SIZE
reserve_pool_size = $RESERVE_POOL_SIZE
reserve_pool_timeout = 3
max_client_conn = $MAX_CLIENT_CONN
; Transaction pooling runs no reset query (server_reset_query is for session
; pooling); nothing a client sets for its session survives its transaction.
server_reset_query = DISCARD ALL
; A client may send statement_timeout as "options" (psycopg2) or as a startup
; parameter (asyncpg): PgBouncer 1.18 refuses a client that sends one it does
; not know, so they are ignored here, and connect_query pins the session.
ignore_startup_parameters = options, statement_timeout, extra_float_digits
; Fail fast when Postgres is away, as the apps' DATABASE_TIMEOUT does.
server_connect_timeout = 5
query_wait_timeout = 30
log_connections = 0
log_disconnections = 0
INI
exec pgbouncer "$dir/pgbouncer.ini"
