"""POST /reviews/."""

from sanic import Blueprint, json

from common.contract import (
    UNKNOWN_FILM,
    ContractError,
    check_replay,
    parse_idempotency_key,
    parse_review,
)

from .db import acquire, finished

blueprint = Blueprint("reviews")

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, $1
                          FROM film
                         WHERE film_id = $2
                     RETURNING review_id, film_id, rating"""

# With an Idempotency-Key: nothing is inserted when a review already holds the
# key. NOT EXISTS sees a stored one (a retry) before a row is built, so a retry
# draws no review_id from the sequence; ON CONFLICT catches a concurrent request
# with the same key, whose INSERT this one waits for (commit or roll back).
# SELECT_KEYED_REVIEW, a new statement and so a new snapshot under READ
# COMMITTED (db.py pins it), then reads the review stored under the key.
# The key is bound twice: Postgres gives a parameter one type, and its two
# uses here want two (varchar where it is stored, text where it is compared).
INSERT_KEYED_REVIEW = """INSERT INTO review (film_id, rating, idempotency_key)
                              SELECT film_id, $1, $2
                                FROM film
                               WHERE film_id = $3
                                 AND NOT EXISTS (SELECT FROM review WHERE idempotency_key = $4)
                                  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL
                                  DO NOTHING
                           RETURNING review_id, film_id, rating"""
SELECT_KEYED_REVIEW = """SELECT review_id, film_id, rating
                           FROM review
                          WHERE idempotency_key = $1"""


@blueprint.post("/reviews")
@finished
async def create_review(request):
    """Store {film_id, rating}; 201 with the stored review. With an
    Idempotency-Key that a stored review holds: 201 with that review again.

    413 if the body is larger than the contract allows; else 400 if the key
    is malformed, then 400 if the body is not JSON, 422 if it is not a review
    of an existing film or the key was used for another review.
    """
    # Sanic has read the body before calling the handler: 413 past REQUEST_MAX_SIZE,
    # whether or not the body declared its length: before the key is read (docs/contract.md).
    body = request.body
    key = parse_idempotency_key(request.headers.getall("Idempotency-Key", []))
    film_id, rating = parse_review(body)
    # One statement, which commits by itself (autocommit): one round trip, where
    # BEGIN, INSERT, COMMIT took three. If Postgres got it but its answer is
    # lost (frozen, a timeout: 503), the review may be stored; a client that
    # must know retries with its Idempotency-Key (docs/contract.md, "Writes").
    async with acquire(request) as connection:
        if key is None:
            review = await connection.fetchrow(INSERT_REVIEW, rating, film_id)
        else:
            review = await insert_keyed(connection, film_id, rating, key)
    if review is None:
        raise ContractError(422, UNKNOWN_FILM)
    check_replay(review, film_id, rating)
    return json(dict(review), status=201)


async def insert_keyed(connection, film_id, rating, key):
    """The review stored under key: inserted now, or by an earlier request with
    the key; None if there is none and the film does not exist."""
    review = await connection.fetchrow(INSERT_KEYED_REVIEW, rating, key, film_id, key)
    if review is None:
        review = await connection.fetchrow(SELECT_KEYED_REVIEW, key)
    return review
