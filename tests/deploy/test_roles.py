"""Least privilege in the database (db/roles.sql), on the real Postgres, from
outside: the apps' role reads film, reads and adds reviews, and can do nothing
else (no DROP, TRUNCATE, ALTER, COPY ... PROGRAM, UPDATE or DELETE, no write
to film); the benchmark's role adds and removes its run's film and VACUUMs
review, but changes no schema; PgBouncer's role looks up films_app's
verifier and nothing else; the owner owns every table."""

import psycopg2
import pytest

from bench.sut import run_film
from common.session import PIN_SESSION
from db import roles
from db.load import SchemaMissing, load
from tests.helpers import query, snapshot


def connect(url):
    connection = psycopg2.connect(url)
    connection.autocommit = True
    return connection


@pytest.fixture
def as_app(database_url, db):
    """A connection as films_app (db: an empty review table, cleaned after)."""
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres: its roles are its own")
    connection = connect(roles.app_url(database_url))
    yield connection
    connection.close()


@pytest.fixture
def bench(database_url, db):
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres: its roles are its own")
    connection = connect(roles.bench_url(database_url))
    yield connection
    connection.close()


@pytest.fixture
def pooler(database_url):
    """A connection as pgbouncer_auth, PgBouncer's own role."""
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres: its roles are its own")
    connection = connect(roles.login_url(database_url, roles.PGBOUNCER))
    yield connection
    connection.close()


def test_the_embedded_urls_log_in_as_the_roles_and_a_url_of_yours_is_kept():
    embedded = "postgresql://postgres@127.0.0.1:5555/benchmark?application_name=x"
    assert (
        roles.app_url(embedded)
        == "postgresql://films_app@127.0.0.1:5555/benchmark?application_name=x"
    )
    assert roles.bench_url(embedded).startswith("postgresql://films_bench@127.0.0.1:5555/")
    yours = "postgresql://me:secret@db.example:5432/films"
    assert roles.app_url(yours) == roles.bench_url(yours) == yours


def test_the_app_logs_in_as_its_own_role(as_app):
    who = "SELECT current_user, usesuper FROM pg_user WHERE usename = current_user"
    assert query(as_app, who) == [(roles.APP, False)]


def test_the_app_reads_films_and_adds_and_reads_reviews(as_app):
    assert query(as_app, "SELECT title FROM film WHERE film_id = 995")
    [(review_id,)] = query(
        as_app, "INSERT INTO review (film_id, rating) VALUES (995, 4) RETURNING review_id"
    )
    assert query(as_app, "SELECT rating FROM review WHERE review_id = %s", review_id) == [(4,)]


# What each role is refused: the apps' everything but their SQL; the bench's
# every schema change and every write but its run's film and reviews.
FORBIDDEN = {
    roles.APP: [
        "DROP TABLE review",
        "TRUNCATE review",
        "ALTER TABLE review ADD COLUMN x integer",
        "ALTER TABLE film OWNER TO films_app",
        "CREATE TABLE mine (x integer)",
        "CREATE TEMPORARY TABLE mine (x integer)",
        "COPY (SELECT 1) TO PROGRAM 'true'",
        "COPY review FROM PROGRAM 'true'",
        "INSERT INTO film (title, language_id) VALUES ('x', 1)",
        "UPDATE film SET title = 'x' WHERE film_id = 995",
        "DELETE FROM film WHERE film_id = 995",
        "UPDATE review SET rating = 1",
        "DELETE FROM review",
        "SELECT * FROM language",
        "SELECT * FROM actor",
        "SELECT setval('review_review_id_seq', 1)",
        "CREATE ROLE intruder",
        "GRANT SELECT ON language TO films_app",
        "SELECT * FROM pgbouncer.user_lookup('films_app')",
        "SELECT bench.remove_run_reviews(995)",
        "SELECT bench.remove_run_film(995)",
    ],
    roles.BENCH: [
        # It deletes through db/roles.sql's functions alone (below).
        "DELETE FROM review",
        "DELETE FROM review WHERE film_id = 995",
        "DELETE FROM film WHERE film_id = 995",
        "CREATE TEMPORARY TABLE mine (x integer)",
        "CREATE FUNCTION bench.mine() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "DROP TABLE review",
        "TRUNCATE review",
        "ALTER TABLE film ADD COLUMN x integer",
        "COPY (SELECT 1) TO PROGRAM 'true'",
        "UPDATE film SET title = 'x' WHERE film_id = 995",
        "UPDATE review SET rating = 1",
        "CREATE TABLE mine (x integer)",
        "SELECT * FROM actor",
        "SELECT * FROM pgbouncer.user_lookup('films_app')",
    ],
    roles.PGBOUNCER: [
        "SELECT * FROM film",
        "SELECT * FROM review",
        "INSERT INTO review (film_id, rating) VALUES (995, 4)",
        "SELECT rolpassword FROM pg_authid",
        "COPY (SELECT 1) TO PROGRAM 'true'",
        "CREATE TABLE mine (x integer)",
        "CREATE FUNCTION pgbouncer.mine() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    ],
}


@pytest.mark.parametrize(
    ("role", "sql"), [(role, sql) for role, refused in FORBIDDEN.items() for sql in refused]
)
def test_each_role_is_refused_what_is_not_its(as_app, bench, pooler, role, sql):
    connection = {roles.APP: as_app, roles.BENCH: bench, roles.PGBOUNCER: pooler}[role]
    with pytest.raises(psycopg2.errors.InsufficientPrivilege):
        query(connection, sql)


def test_pgbouncers_role_looks_up_the_apps_verifier_alone(pooler):
    """auth_query's function (db/roles.sql) answers films_app's row, and no
    row for the superuser or any other role: whoever holds PgBouncer's
    password reads no other verifier."""
    lookup = "SELECT uname FROM pgbouncer.user_lookup(%s)"
    assert query(pooler, lookup, roles.APP) == [(roles.APP,)]
    for other in ("postgres", roles.OWNER, roles.BENCH, roles.PGBOUNCER):
        assert query(pooler, lookup, other) == [], other


def test_the_bench_adds_and_removes_its_run_film_and_vacuums(bench, as_app):
    """create() and release(), not held(): its sweep would take the films of
    test_run_film.py's tests, running beside this one."""
    film = run_film.create(bench, "benchmark run roles test")
    try:
        query(as_app, "INSERT INTO review (film_id, rating) VALUES (%s, 5) RETURNING 1", film)
        assert run_film.count(bench, film) == 1
        run_film.vacuum(bench)  # MAINTAIN on review (Postgres 17+)
    finally:
        assert run_film.release(bench, film) == run_film.Removed(films=1, reviews=1)
    assert query(bench, "SELECT count(*) FROM film WHERE film_id = %s", film) == [(0,)]


def test_the_bench_cannot_delete_a_row_it_did_not_write(bench, as_app, db):
    """The database's limit, whatever SQL the harness sends: the removal
    functions delete no review of a film that is not a run's (995's, which
    an app wrote) and no such film, nor a film the bench added without the
    run's mark; a run's film and its reviews they do."""
    [(written,)] = query(
        as_app, "INSERT INTO review (film_id, rating) VALUES (995, 3) RETURNING review_id"
    )
    assert query(bench, "SELECT bench.remove_run_reviews(995)") == [(0,)]
    assert query(bench, "SELECT bench.remove_run_film(995)") == [(0,)]
    assert query(bench, "SELECT count(*) FROM review WHERE review_id = %s", written) == [(1,)]
    assert query(bench, "SELECT count(*) FROM film WHERE film_id = 995") == [(1,)]
    [(unmarked,)] = query(
        bench,
        "INSERT INTO film (title, description, language_id) VALUES ('x', 'mine', 1)"
        " RETURNING film_id",
    )
    try:
        assert query(bench, "SELECT bench.remove_run_film(%s)", unmarked) == [(0,)]
    finally:
        query(db, "DELETE FROM film WHERE film_id = %s RETURNING 1", unmarked)
    film = run_film.create(bench, "benchmark run roles test")
    query(as_app, "INSERT INTO review (film_id, rating) VALUES (%s, 5) RETURNING 1", film)
    assert run_film.release(bench, film) == run_film.Removed(films=1, reviews=1)


def test_the_functions_mark_is_the_harness_mark():
    """db/roles.sql's functions delete the films bench/sut/run_film.py marks."""
    sql = roles.SQL.read_text()
    assert sql.count(f"'{run_film.MARK}'") == 2


def test_no_role_of_the_project_makes_temporary_objects_in_postgres(database_url):
    """TEMPORARY is revoked from PUBLIC in the postgres database too, which
    every role may connect to, not only in the project's."""
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres: its roles are its own")
    for role in (roles.APP, roles.BENCH, roles.PGBOUNCER):
        url = roles.login_url(database_url.rsplit("/", 1)[0] + "/postgres", role)
        connection = connect(url)
        try:
            with pytest.raises(psycopg2.errors.InsufficientPrivilege):
                query(connection, "CREATE TEMPORARY TABLE mine (x integer)")
        finally:
            connection.close()


def test_the_apps_session_pinning_works_for_its_role(as_app):
    """READ COMMITTED and the stricter statement_timeout, pinned by the pools'
    init (common/session.py), as films_app: the DBA's stricter one stays."""
    with as_app.cursor() as cursor:
        cursor.execute("SET statement_timeout = '1500ms'")
        cursor.execute("SET default_transaction_isolation = 'serializable'")
        cursor.execute(PIN_SESSION.format(timeout="%s"), (5000,))
    assert query(
        as_app,
        "SELECT current_setting('statement_timeout'), current_setting('transaction_isolation')",
    ) == [("1500ms", "read committed")]


def test_the_owner_owns_every_table_and_sequence(db):
    owners = query(
        db,
        """SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S')""",
    )
    assert owners == [(roles.OWNER,)]


SCHEMA = """SELECT c.relname, c.relkind, pg_get_userbyid(c.relowner), c.relacl::text,
                   (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0)
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' ORDER BY c.relname"""


def test_a_role_that_may_not_load_finds_the_schema_there_and_changes_nothing(as_app, database_url):
    """db.load as films_app, then films_bench: nothing to load, nothing
    refused, and every row, sequence, relation, owner and grant as before."""
    connection = psycopg2.connect(database_url)
    try:
        before = snapshot(database_url), query(connection, SCHEMA)
        load(roles.app_url(database_url))
        load(roles.bench_url(database_url))
        after = snapshot(database_url), query(connection, SCHEMA)
    finally:
        connection.close()
    assert after == before


def test_a_role_that_may_not_load_says_so_on_an_empty_database(database_url):
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres")
    admin = connect(database_url.rsplit("/", 1)[0] + "/postgres")
    query_none = admin.cursor().execute
    query_none("DROP DATABASE IF EXISTS dvdrental_roles_empty")
    query_none("CREATE DATABASE dvdrental_roles_empty")
    try:
        empty = roles.app_url(database_url.rsplit("/", 1)[0] + "/dvdrental_roles_empty")
        with pytest.raises(SchemaMissing, match="python -m db.load"):
            load(empty)
    finally:
        query_none("DROP DATABASE dvdrental_roles_empty")
        admin.close()
