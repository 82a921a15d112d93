"""The sample database: generated deterministically, loaded idempotently."""

import psycopg2
import pytest

from db import generate
from db.load import load
from tests.helpers import query
from tests.reliability.test_faults import query_none

TABLES = ["language", "category", "actor", "film", "film_actor", "film_category"]


def test_committed_data_equals_a_fresh_generation():
    assert generate.DATA_SQL.read_text() == generate.generate()


def test_another_seed_gives_other_data():
    assert generate.generate(seed=1) != generate.generate()


def counts(connection):
    return {table: query(connection, f"SELECT count(*) FROM {table}")[0][0] for table in TABLES}


def test_loading_twice_neither_fails_nor_duplicates(database_url, db):
    before = counts(db)
    load(database_url)
    assert counts(db) == before
    assert before["film"] == 1000 and before["language"] == 6


def test_every_film_is_released_after_2000(db):
    assert query(db, "SELECT count(*) FROM film WHERE release_year > 2000") == [(1000,)]


def test_sequences_follow_the_explicit_ids(db):
    for table in ("language", "category", "actor", "film"):
        [(last, highest)] = query(
            db,
            f"SELECT (SELECT last_value FROM {table}_{table}_id_seq), max({table}_id) FROM {table}",
        )
        assert last >= highest  # ahead where rows were added and removed since


def test_loading_never_moves_a_sequence_back(db, database_url):
    """An id a sequence handed out (a row since deleted: a benchmark run's
    film) is never handed out again, however often the data is loaded."""
    [(ahead,)] = query(db, "SELECT last_value + 7 FROM film_film_id_seq")
    query(db, "SELECT setval('film_film_id_seq', %s)", ahead)
    load(database_url)
    assert query(db, "SELECT last_value FROM film_film_id_seq") == [(ahead,)]


def test_review_rating_is_checked(db):
    with pytest.raises(psycopg2.errors.CheckViolation):
        query(db, "INSERT INTO review (film_id, rating) VALUES (1, 6) RETURNING review_id")


def test_loading_upgrades_a_database_loaded_before_idempotency_keys(database_url):
    """A database loaded before review had idempotency_key (an existing
    .pgdata, a DATABASE_URL database) gets the column and its unique index from
    the next load, which every start runs, and keeps its reviews."""
    admin = psycopg2.connect(database_url, dbname="postgres")
    admin.autocommit = True
    query_none(admin, "DROP DATABASE IF EXISTS dvdrental_upgrade")
    query_none(admin, "CREATE DATABASE dvdrental_upgrade")
    url = database_url.rsplit("/", 1)[0] + "/dvdrental_upgrade"
    try:
        load(url)
        old = psycopg2.connect(url)
        old.autocommit = True
        query_none(old, "ALTER TABLE review DROP COLUMN idempotency_key")  # as before
        query_none(old, "INSERT INTO review (film_id, rating) VALUES (995, 4)")
        load(url)
        assert query(old, "SELECT film_id, rating, idempotency_key FROM review") == [(995, 4, None)]
        query_none(old, "INSERT INTO review (film_id, rating, idempotency_key) VALUES (1, 1, 'k')")
        with pytest.raises(psycopg2.errors.UniqueViolation):
            query_none(
                old, "INSERT INTO review (film_id, rating, idempotency_key) VALUES (1, 1, 'k')"
            )
        old.close()
    finally:
        query_none(admin, "DROP DATABASE IF EXISTS dvdrental_upgrade")
        admin.close()
