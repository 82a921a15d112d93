"""The run's film (bench/sut/run_film.py), on the real database: the only
rows a benchmark writes, counted, and the only ones it deletes; a film left
by a run that is gone is swept, one a live run holds is not."""

import psycopg2
import pytest

from bench.sut import run_film
from tests.helpers import query, wait_until

OTHERS = "SELECT review_id, film_id, rating FROM review ORDER BY review_id"
BACKEND = "SELECT 1 FROM pg_stat_activity WHERE pid = %s"


def connect(url):
    connection = psycopg2.connect(url)
    connection.autocommit = True
    return connection


def review(connection, film_id, rating=4):
    query(
        connection,
        "INSERT INTO review (film_id, rating) VALUES (%s, %s) RETURNING 1",
        film_id,
        rating,
    )


@pytest.fixture
def film(db):
    """A run's film, held by the `db` connection; removed after the test."""
    film_id = run_film.create(db, "benchmark run test")
    yield film_id
    run_film.remove(db, film_id)


def test_a_run_counts_and_removes_its_reviews_only(db, film):
    for film_id in (995, 995, 1, film, film, film):
        review(db, film_id)
    others = query(db, OTHERS + " LIMIT 3")
    assert run_film.settled_count(db, film, quiet=0.05) == 3
    assert run_film.remove_reviews(db, film) == 3
    assert run_film.count(db, film) == 0
    assert query(db, OTHERS) == others


def test_its_film_has_no_year_so_the_film_list_does_not_show_it(db, film):
    assert query(db, "SELECT release_year, description FROM film WHERE film_id = %s", film) == [
        (None, run_film.MARK)
    ]


def test_removing_it_leaves_every_other_row_and_the_sequences_as_they_were(db):
    review(db, 995)
    reviews, films = query(db, OTHERS), query(db, "SELECT * FROM film ORDER BY film_id")
    film_id = run_film.create(db, "benchmark run test")
    review(db, film_id)
    sequences = query(
        db, "SELECT r.last_value, f.last_value FROM review_review_id_seq r, film_film_id_seq f"
    )
    assert run_film.release(db, film_id) == run_film.Removed(films=1, reviews=1)
    assert query(db, OTHERS) == reviews
    assert query(db, "SELECT * FROM film ORDER BY film_id") == films
    assert (
        query(
            db, "SELECT r.last_value, f.last_value FROM review_review_id_seq r, film_film_id_seq f"
        )
        == sequences
    )


def test_a_film_whose_run_is_gone_is_swept_one_a_live_run_holds_is_not(db, database_url):
    run_film.sweep(db)  # what an earlier test may have left
    live, gone = connect(database_url), connect(database_url)
    try:
        held = run_film.create(live, "benchmark run live")
        left = run_film.create(gone, "benchmark run killed")
        review(db, left)
        backend = gone.get_backend_pid()
        gone.close()  # its session, and so its lock, ends with the connection...
        # ...once its backend has seen the close and exited: a moment on a busy machine
        assert wait_until(lambda: not query(db, BACKEND, backend), timeout=10)
        assert run_film.sweep(db) == run_film.Removed(films=1, reviews=1)
        assert query(db, "SELECT film_id FROM film WHERE description = %s", run_film.MARK) == [
            (held,)
        ]
    finally:
        run_film.release(live, held)
        live.close()


def test_held_removes_the_film_when_the_block_fails(db):
    run_film.sweep(db)  # what an earlier test may have left
    said = []
    with pytest.raises(KeyboardInterrupt), run_film.held(db, "benchmark run test", said.append):
        [(film_id,)] = query(db, "SELECT max(film_id) FROM film")
        review(db, film_id)
        raise KeyboardInterrupt
    assert query(db, "SELECT count(*) FROM film WHERE film_id = %s", film_id) == [(0,)]
    assert said == [f"removed the run's film {film_id} and its 1 review(s)"]


def test_a_database_without_the_schema_is_refused_in_one_sentence(db):
    query(db, "CREATE TEMPORARY TABLE film (film_id int) ON COMMIT PRESERVE ROWS; SELECT 1")
    with pytest.raises(run_film.RunFilmError, match="cannot add the run's film"):
        run_film.create(db, "benchmark run test")


def test_a_database_without_the_removal_functions_is_refused_before_a_write(database_url):
    """The bench deletes only through db/roles.sql's functions: where they
    are not, it adds no film it could not remove, and says what to run."""
    admin = connect(database_url.rsplit("/", 1)[0] + "/postgres")
    admin.cursor().execute("DROP DATABASE IF EXISTS dvdrental_no_roles")
    admin.cursor().execute("CREATE DATABASE dvdrental_no_roles")
    try:
        bare = connect(database_url.rsplit("/", 1)[0] + "/dvdrental_no_roles")
        with pytest.raises(run_film.RunFilmError, match=r"db/roles\.sql") as refused:
            run_film.create(bare, "benchmark run test")
        bare.close()
        assert "\n" not in str(refused.value)
    finally:
        admin.cursor().execute("DROP DATABASE dvdrental_no_roles")
        admin.close()
