#!/bin/sh
# PgBouncer's configuration from the environment, then PgBouncer itself as
# PID 1 (it gets the stop signal). Every database name is passed through to
# DB_HOST:DB_PORT.
#
#   DB_HOST, DB_PORT         the Postgres behind it (db, 5432)
#   AUTH_USER, AUTH_PASSWORD_FILE   PgBouncer's own Postgres role
#                            (pgbouncer_auth, db/roles.sql) and a file holding
#                            its password: a client logs in with its own
#                            password, checked against the SCRAM verifier
#                            Postgres keeps (auth_query: pgbouncer.user_lookup,
#                            films_app's only), and PgBouncer logs in to Postgres
#                            as that client with the same SCRAM keys. PgBouncer
#                            holds no client's password (compose, Kubernetes)
#   DB_USER, DB_PASSWORD_FILE   without AUTH_PASSWORD_FILE: the one user
#                            clients log in as, and a file holding its password,
#                            which PgBouncer then keeps in its auth_file: where
#                            the lookup cannot be made (a Postgres without a
#                            superuser) and for the benchmark's own PgBouncer
#                            (bench/sut/pgbouncer.py). Never a password itself
#                            in the environment
#   ADMIN_USER, ADMIN_PASSWORD_FILE   the admin console's user (PAUSE, KILL,
#                            SHUTDOWN), PgBouncer's own, not a Postgres role;
#                            none without the file
#   STATS_USER, STATS_PASSWORD_FILE   the read-only console's (SHOW ...);
#                            none without the file. Neither may be a client's
#                            user: whoever holds the apps' URL cannot reach them
#   POOL_MODE                transaction (default): a server connection is a
#                            client's only for one transaction; read the trap
#                            in docs/deploy.md before using it with asyncpg
#   DEFAULT_POOL_SIZE        server connections per database and user (20):
#                            what Postgres sees, whatever the client count
#   RESERVE_POOL_SIZE        more when clients wait over 3 s (5)
#   MAX_CLIENT_CONN          client connections accepted (2000)
#   LISTEN_ADDR, LISTEN_PORT where clients connect (127.0.0.1, 6432; a
#                            container says 0.0.0.0: its network only)
#   STATEMENT_TIMEOUT_MS     set on each server connection (5000), unless the
#                            server's own is stricter: the clients' startup
#                            settings cannot pass PgBouncer
#   SERVER_TLS_SSLMODE, SERVER_TLS_CA_FILE   TLS to Postgres (PgBouncer's
#                            server_tls_sslmode, server_tls_ca_file): unset,
#                            PgBouncer's default (prefer); verify-ca and
#                            verify-full need the CA's certificates in the file
#                            (a Postgres outside: deploy/k8s/overlays/external-database)
set -eu

: "${DB_HOST:=db}" "${DB_PORT:=5432}" "${AUTH_USER:=pgbouncer_auth}"
if [ -z "${AUTH_PASSWORD_FILE:-}" ]; then
    : "${DB_USER:?give AUTH_PASSWORD_FILE (auth_query), or DB_USER and DB_PASSWORD_FILE}"
    : "${DB_PASSWORD_FILE:?DB_PASSWORD_FILE is not set (a file holding DB_USER's password)}"
fi
: "${ADMIN_USER:=pgbouncer_admin}" "${STATS_USER:=pgbouncer_stats}"
: "${POOL_MODE:=transaction}" "${DEFAULT_POOL_SIZE:=20}" "${RESERVE_POOL_SIZE:=5}"
: "${MAX_CLIENT_CONN:=2000}" "${STATEMENT_TIMEOUT_MS:=5000}"
: "${LISTEN_ADDR:=127.0.0.1}" "${LISTEN_PORT:=6432}"
if [ -n "${DB_PASSWORD:-}${AUTH_PASSWORD:-}" ]; then
    echo "DB_PASSWORD and AUTH_PASSWORD are not read: give *_PASSWORD_FILE, a file holding it" >&2
    exit 2
fi
for user in "$ADMIN_USER" "$STATS_USER"; do
    if [ "$user" = "$AUTH_USER" ] || [ "$user" = "${DB_USER:-}" ]; then
        echo "the console's users must be neither AUTH_USER nor DB_USER ($user)" >&2
        exit 2
    fi
done
server_tls=""
case "${SERVER_TLS_SSLMODE:-}" in
    '') ;;
    disable | allow | prefer | require) server_tls="server_tls_sslmode = $SERVER_TLS_SSLMODE" ;;
    verify-ca | verify-full)
        if [ ! -r "${SERVER_TLS_CA_FILE:-}" ]; then
            echo "SERVER_TLS_SSLMODE=$SERVER_TLS_SSLMODE needs SERVER_TLS_CA_FILE, a readable file of the CA's certificates" >&2
            exit 2
        fi
        server_tls="server_tls_sslmode = $SERVER_TLS_SSLMODE
server_tls_ca_file = $SERVER_TLS_CA_FILE" ;;
    *) echo "SERVER_TLS_SSLMODE must be disable, allow, prefer, require, verify-ca or verify-full" >&2; exit 2 ;;
esac
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

for file in "${AUTH_PASSWORD_FILE:-$DB_PASSWORD_FILE}" ${ADMIN_PASSWORD_FILE:-} ${STATS_PASSWORD_FILE:-}; do
    if [ ! -r "$file" ]; then
        echo "cannot read the password file $file" >&2
        exit 2
    fi
done
# A password from its file: the first line, without its newline; a double
# quote doubled (userlist.txt's quoting).
secret() {
    head -n 1 "$1" | sed 's/"/""/g'
}

dir="$(mktemp -d)"
umask 077
# The users PgBouncer itself knows: its auth user (or the apps', passed on to
# Postgres) and, when their password files are given, its consoles'.
if [ -n "${AUTH_PASSWORD_FILE:-}" ]; then
    printf '"%s" "%s"\n' "$AUTH_USER" "$(secret "$AUTH_PASSWORD_FILE")" > "$dir/userlist.txt"
    # The auth user on the databases, not in [pgbouncer]: there it would
    # also serve the console's database, where PgBouncer 1.18 then holds a
    # client that is not in userlist.txt waiting for good instead of refusing
    # it (pgbouncer/pgbouncer#798).
    auth_user=" auth_user=$AUTH_USER"
    auth_query="auth_query = SELECT uname, phash FROM pgbouncer.user_lookup(\$1)"
    # Its lookups take one server connection of their own, beside the pool.
    auth_users="[users]
$AUTH_USER = max_user_connections=1"
    # Its password is in userlist.txt for its own login to Postgres: as a
    # client of PgBouncer's it is refused, whatever it sends; everyone else is
    # checked by SCRAM, as auth_type scram-sha-256 checks them.
    printf '%s\n' \
        "host all \"$AUTH_USER\" 0.0.0.0/0 reject" "host all \"$AUTH_USER\" ::/0 reject" \
        "host all all 0.0.0.0/0 scram-sha-256" "host all all ::/0 scram-sha-256" > "$dir/hba.conf"
    auth_type="auth_type = hba
auth_hba_file = $dir/hba.conf"
else
    printf '"%s" "%s"\n' "$DB_USER" "$(secret "$DB_PASSWORD_FILE")" > "$dir/userlist.txt"
    auth_user=""
    auth_query=""
    auth_users=""
    auth_type="auth_type = scram-sha-256"
fi
admin_users=""
stats_users=""
if [ -n "${ADMIN_PASSWORD_FILE:-}" ]; then
    printf '"%s" "%s"\n' "$ADMIN_USER" "$(secret "$ADMIN_PASSWORD_FILE")" >> "$dir/userlist.txt"
    admin_users="$ADMIN_USER"
fi
if [ -n "${STATS_PASSWORD_FILE:-}" ]; then
    printf '"%s" "%s"\n' "$STATS_USER" "$(secret "$STATS_PASSWORD_FILE")" >> "$dir/userlist.txt"
    stats_users="$STATS_USER"
fi
cat > "$dir/pgbouncer.ini" <<INI
[databases]
* = host=$DB_HOST port=$DB_PORT$auth_user connect_query='$pin_session'

[pgbouncer]
listen_addr = $LISTEN_ADDR
listen_port = $LISTEN_PORT
unix_socket_dir =
$auth_type
auth_file = $dir/userlist.txt
$auth_query
; The consoles' users, never the apps' (an empty list: no one).
admin_users = $admin_users
stats_users = $stats_users
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
$server_tls
query_wait_timeout = 30
log_connections = 0
log_disconnections = 0

$auth_users
INI
exec pgbouncer "$dir/pgbouncer.ini"
