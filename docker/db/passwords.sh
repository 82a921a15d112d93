# Sourced by the postgres image's entrypoint at the first start, after the
# schema, the data and db/roles.sql (compose.yaml's db): each role gets its
# password from its Docker secret. psql reads the files itself (\set with
# backquotes): no password on a command line or in the environment. The
# superuser's comes from POSTGRES_PASSWORD_FILE, the image's own.
for role in owner app bench pgbouncer_auth; do
    if [ ! -r "/run/secrets/${role}_password" ]; then
        echo "passwords.sh: cannot read /run/secrets/${role}_password" >&2
        exit 1
    fi
done
psql -v ON_ERROR_STOP=1 --no-psqlrc -q --username "${POSTGRES_USER:-postgres}" \
    --dbname "${POSTGRES_DB:-postgres}" <<'SQL'
\set owner `head -n 1 /run/secrets/owner_password`
\set app `head -n 1 /run/secrets/app_password`
\set bench `head -n 1 /run/secrets/bench_password`
\set pgbouncer `head -n 1 /run/secrets/pgbouncer_auth_password`
ALTER ROLE films_owner PASSWORD :'owner';
ALTER ROLE films_app PASSWORD :'app';
ALTER ROLE films_bench PASSWORD :'bench';
ALTER ROLE pgbouncer_auth PASSWORD :'pgbouncer';
SQL
