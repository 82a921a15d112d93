-- Least privilege: who may do what in the sample database. Run as a superuser
-- (or a role with CREATEROLE that owns the objects) after 01-schema.sql, in
-- every database of the project: db/load.py runs it for the embedded Postgres
-- and the tests, compose.yaml's db runs it at its first start
-- (/docker-entrypoint-initdb.d), the Kubernetes bases from the same file. A
-- DBA whose database is given to `./benchmark.sh --database-url` runs it too
-- (docs/deploy.md). Idempotent: run twice, it changes nothing.
--
--   films_owner  owns the schema: the tables, their sequences, the types.
--                Migrations (db/load.py) run as it or as a superuser.
--   films_app    what the four apps need, nothing else: SELECT film; SELECT
--                and INSERT review, and the review id's sequence. No UPDATE,
--                DELETE, TRUNCATE, DDL, temporary tables or COPY ... PROGRAM.
--   films_bench  what ./benchmark.sh needs: the apps' SQL (pgbench's ceiling),
--                its run's film added, and removed with its reviews through
--                the bench schema's two functions alone (no DELETE of its
--                own: below), VACUUM review (MAINTAIN, Postgres 17+) and
--                every session's application_name (pg_read_all_stats: the
--                connections each app holds).
--   pgbouncer_auth  PgBouncer's own login (its auth_user): it may run
--                pgbouncer.user_lookup, which answers a client's SCRAM
--                verifier, films_app's alone, and nothing else. PgBouncer
--                then holds no client's password (docker/pgbouncer/).
--
-- The roles are created able to log in but with no password: over
-- scram-sha-256 no one logs in as them until one is set (compose:
-- docker/db/passwords.sh, from the generated secrets). Roles are the
-- cluster's, grants the database's.

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['films_owner', 'films_app', 'films_bench', 'pgbouncer_auth'] LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = name) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I LOGIN', name);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;  -- created meanwhile by a load of another database
            END;
        END IF;
    END LOOP;
END $$;

-- The owner owns everything in public: tables (and with them their indexes and
-- serial sequences), the enum and the domain.
DO $$
DECLARE
    object record;
BEGIN
    FOR object IN
        SELECT c.oid::regclass AS name
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
           AND c.relowner <> 'films_owner'::regrole
    LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO films_owner', object.name);
    END LOOP;
    FOR object IN
        SELECT t.oid::regtype AS name, t.typtype AS kind
          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
         WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd')
           AND t.typowner <> 'films_owner'::regrole
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO films_owner',
                       CASE object.kind WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, object.name);
    END LOOP;
    -- Temporary tables: none for PUBLIC in this database (the owner keeps them),
    -- nor in the two every cluster has, which any role may connect to: the
    -- project's roles make no temporary object there either (a superuser
    -- still may; a cluster's other roles lose it there too).
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO films_owner', current_database());
    FOR object IN
        SELECT datname AS name FROM pg_database
         WHERE datname IN ('postgres', 'template1') AND datname <> current_database()
    LOOP
        EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', object.name);
    END LOOP;
END $$;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO films_owner;
GRANT USAGE ON SCHEMA public TO films_app, films_bench;

-- Exactly these, whatever was granted before.
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM films_app, films_bench;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM films_app, films_bench;

GRANT SELECT ON film TO films_app;
GRANT SELECT, INSERT ON review TO films_app;
GRANT USAGE ON SEQUENCE review_review_id_seq TO films_app;

GRANT SELECT ON film, language, review TO films_bench;
GRANT INSERT ON film, review TO films_bench;
GRANT USAGE ON SEQUENCE film_film_id_seq, review_review_id_seq TO films_bench;
GRANT pg_read_all_stats TO films_bench;
DO $$
BEGIN
    EXECUTE 'GRANT MAINTAIN ON review TO films_bench';  -- Postgres 17+
EXCEPTION WHEN syntax_error OR feature_not_supported THEN
    NULL;  -- before 17: the bench VACUUMs only a database it started itself
END $$;

-- What the bench may delete, and no more: its run's film (bench/sut/run_film.py:
-- the film whose description is its MARK, which the bench added) and that
-- film's reviews. A DELETE grant would take any row of the tables, whatever
-- the harness's SQL says; these two functions are the owner's, SECURITY
-- DEFINER, and delete only those rows, so the limit is the database's. Each
-- answers how many rows it deleted.
CREATE SCHEMA IF NOT EXISTS bench AUTHORIZATION films_owner;
REVOKE ALL ON SCHEMA bench FROM PUBLIC;
GRANT USAGE ON SCHEMA bench TO films_bench;

CREATE OR REPLACE FUNCTION bench.remove_run_reviews(run_film integer) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $remove$
    WITH removed AS (
        DELETE FROM public.review AS r
         USING public.film AS f
         WHERE r.film_id = run_film AND f.film_id = run_film
           AND f.description = 'Written by ./benchmark.sh for one run; removed with its reviews when the run ends.'
        RETURNING 1
    )
    SELECT count(*) FROM removed
$remove$;

-- The film alone: its reviews first (above); one an app still adds fails
-- this with a foreign key violation, and the bench tries again.
CREATE OR REPLACE FUNCTION bench.remove_run_film(run_film integer) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $remove$
    WITH removed AS (
        DELETE FROM public.film AS f
         WHERE f.film_id = run_film
           AND f.description = 'Written by ./benchmark.sh for one run; removed with its reviews when the run ends.'
        RETURNING 1
    )
    SELECT count(*) FROM removed
$remove$;

ALTER FUNCTION bench.remove_run_reviews(integer) OWNER TO films_owner;
ALTER FUNCTION bench.remove_run_film(integer) OWNER TO films_owner;
REVOKE ALL ON FUNCTION bench.remove_run_reviews(integer), bench.remove_run_film(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bench.remove_run_reviews(integer), bench.remove_run_film(integer)
    TO films_bench;

-- PgBouncer's auth_query (docker/pgbouncer/entrypoint.sh): a client's SCRAM
-- verifier from pg_authid, which only a superuser reads, so the function is
-- the superuser's own, SECURITY DEFINER, and answers for films_app only (the
-- one role that logs in through PgBouncer): no superuser's verifier, no other
-- role's. PgBouncer checks the client's password against it, then logs in to
-- Postgres as the client with the same SCRAM keys. A role that is not a
-- superuser (a managed Postgres' admin) cannot make it: PgBouncer then takes
-- the apps' password in its own file instead (DB_PASSWORD_FILE, docs/deploy.md).
DO $$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'pgbouncer.user_lookup not made: only a superuser may read pg_authid';
        RETURN;
    END IF;
    CREATE SCHEMA IF NOT EXISTS pgbouncer;
    REVOKE ALL ON SCHEMA pgbouncer FROM PUBLIC;
    GRANT USAGE ON SCHEMA pgbouncer TO pgbouncer_auth;
    -- No row for any other name: PgBouncer answers "no such user" as for one
    -- that does not exist (a row of nulls would be its "config error").
    CREATE OR REPLACE FUNCTION pgbouncer.user_lookup(username text)
        RETURNS TABLE (uname text, phash text)
        LANGUAGE sql STABLE SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp
    AS $lookup$
        SELECT rolname::text, rolpassword
          FROM pg_authid
         WHERE rolname = username AND rolname = 'films_app' AND rolcanlogin AND NOT rolsuper
    $lookup$;
    REVOKE ALL ON FUNCTION pgbouncer.user_lookup(text) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION pgbouncer.user_lookup(text) TO pgbouncer_auth;
END $$;
