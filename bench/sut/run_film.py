"""The run's film: the only rows a benchmark writes, and the only ones it deletes.

A run that posts reviews posts them to a film of its own, inserted when the
run opens its database and deleted, with its reviews, when the run ends
(whatever ends it: the end, an error, Ctrl-C, SIGTERM). A POST run's books
count that film's reviews, and between runs only they are removed. Every row
that was in the database before the run is left as it was, in a database of
yours as in the throwaway one: no TRUNCATE, no sequence reset (an id once
handed out is never handed out again).

The film has no release year, so GET /films/ (films after a year) does not
list it; the reads measure film 995 as before.

A run killed outright (SIGKILL, a lost machine) leaves its film behind. While
a run lives it holds a session advisory lock on its film, on its own
connection; the next run removes every benchmark film whose lock is free (its
run is gone) and says so. The connection must therefore reach Postgres
itself, not a pooler in transaction mode (pgbench's ceiling needs that too).
"""

import contextlib
import time
from dataclasses import dataclass

import psycopg2

from bench.errors import BenchmarkError
from bench.sut.database import scalar

# What marks a film as the benchmark's: nothing else writes this description.
MARK = "Written by ./benchmark.sh for one run; removed with its reviews when the run ends."
LOCK_SPACE = 0x62656E63  # "benc": advisory locks (LOCK_SPACE, film_id)

INSERT_FILM = """INSERT INTO film (title, description, language_id)
                 SELECT %s, %s, min(language_id) FROM language
              RETURNING film_id"""
MARKED_FILMS = "SELECT film_id FROM film WHERE description = %s ORDER BY film_id"
COUNT_REVIEWS = "SELECT count(*) FROM review WHERE film_id = %s"
# The bench deletes only through the database's own functions (db/roles.sql),
# which delete a film only if it holds MARK, and only such a film's reviews:
# films_bench has no DELETE of its own.
REMOVERS = "SELECT to_regprocedure('bench.remove_run_film(integer)') IS NOT NULL"
REMOVE_REVIEWS = "SELECT bench.remove_run_reviews(%s)"
REMOVE_FILM = "SELECT bench.remove_run_film(%s)"


class RunFilmError(BenchmarkError):
    """The run's film could not be made or removed."""


@dataclass(frozen=True)
class Removed:
    """What one removal deleted."""

    films: int
    reviews: int


def create(connection, title):
    """The id of a new benchmark film titled title, locked by this session.
    RunFilmError if the database cannot hold it (not the project's schema),
    or could not remove it (db/roles.sql not run there)."""
    if not scalar(connection, REMOVERS):
        raise RunFilmError(
            "this database has no bench.remove_run_film(), the only way the benchmark "
            "deletes its run's film: run db/roles.sql there as a superuser (docs/deploy.md)"
        )
    try:
        film_id = scalar(connection, INSERT_FILM, title, MARK)
        scalar(connection, "SELECT pg_advisory_lock(%s, %s)", LOCK_SPACE, film_id)
    except psycopg2.Error as error:
        raise RunFilmError(
            f"cannot add the run's film to this database: {str(error).strip()}"
        ) from None
    return film_id


def count(connection, film_id):
    """The reviews of film_id."""
    return scalar(connection, COUNT_REVIEWS, film_id)


def settled_count(connection, film_id, quiet=1.0, timeout=30.0):
    """The film's review count once it has not moved for `quiet` seconds:
    requests still in flight when the load stopped are answered (and
    committed) after it, and a server with a listen backlog (wsgiref, one
    thread) keeps committing the requests queued there for a while, with
    gaps between them."""
    deadline = time.monotonic() + timeout
    latest = count(connection, film_id)
    steady_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(0.1, quiet))
        now = count(connection, film_id)
        if now != latest:
            latest, steady_since = now, time.monotonic()
        elif time.monotonic() - steady_since >= quiet:
            break
    return latest


def remove_reviews(connection, film_id):
    """Delete the film's reviews (the run's own): how many there were."""
    return scalar(connection, REMOVE_REVIEWS, film_id)


def remove(connection, film_id, attempts=5):
    """Delete the film and its reviews in one transaction. A review that an
    app commits between the two DELETEs (a request still in flight) fails the
    second one; then the transaction rolls back and it is tried again."""
    for attempt in range(attempts):
        try:
            with connection:  # one transaction, in autocommit too (psycopg2 2.9)
                reviews = remove_reviews(connection, film_id)
                films = scalar(connection, REMOVE_FILM, film_id)
            return Removed(films, reviews)
        except psycopg2.errors.ForeignKeyViolation:
            time.sleep(0.5 * (attempt + 1))
    raise RunFilmError(f"film {film_id} still gains reviews: not removed")


def release(connection, film_id):
    """Remove the run's film and give up its lock."""
    removed = remove(connection, film_id)
    scalar(connection, "SELECT pg_advisory_unlock(%s, %s)", LOCK_SPACE, film_id)
    return removed


def sweep(connection):
    """Remove the benchmark films whose runs are gone (their lock is free):
    what they held, summed. A film a live run holds is left alone."""
    films = reviews = 0
    with connection.cursor() as cursor:
        cursor.execute(MARKED_FILMS, (MARK,))
        marked = [row[0] for row in cursor.fetchall()]
    for film_id in marked:
        if scalar(connection, "SELECT pg_try_advisory_lock(%s, %s)", LOCK_SPACE, film_id):
            removed = release(connection, film_id)
            films, reviews = films + removed.films, reviews + removed.reviews
    return Removed(films, reviews)


def vacuum(connection):
    """VACUUM review: the dead rows of the reviews removed go, as TRUNCATE's
    would, so that every POST run meets the same table (only in a database
    the run started itself)."""
    with connection.cursor() as cursor:
        cursor.execute("VACUUM review")


@contextlib.contextmanager
def held(connection, title, say=print):
    """The run's film for the block: the films of runs that are gone swept
    first, this one removed with its reviews after, whatever ends the block."""
    swept = sweep(connection)
    if swept.films:
        say(
            f"removed {swept.films} film(s) and {swept.reviews} review(s) that an "
            "interrupted benchmark run had written"
        )
    film_id = create(connection, title)
    try:
        yield film_id
    finally:
        try:
            removed = release(connection, film_id)
        except (psycopg2.Error, RunFilmError) as error:
            say(
                f"the run's film {film_id} and its reviews are still in the database "
                f"({str(error).strip()}); the next run removes them"
            )
        else:
            say(f"removed the run's film {film_id} and its {removed.reviews} review(s)")
