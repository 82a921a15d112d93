"""POST /reviews/."""

import falcon

from common.contract import (
    UNKNOWN_FILM,
    ContractError,
    check_replay,
    parse_idempotency_key,
    parse_review,
)
from common.wsgi import read_body

from .errors import method_not_allowed

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, %s
                          FROM film
                         WHERE film_id = %s
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
                              SELECT film_id, %s, %s
                                FROM film
                               WHERE film_id = %s
                                 AND NOT EXISTS (SELECT FROM review WHERE idempotency_key = %s)
                                  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL
                                  DO NOTHING
                           RETURNING review_id, film_id, rating"""
SELECT_KEYED_REVIEW = """SELECT review_id, film_id, rating
                           FROM review
                          WHERE idempotency_key = %s"""


class Reviews:
    def __init__(self, pool):
        self.pool = pool

    def on_post(self, req, resp):
        """Store {film_id, rating}; 201 with the stored review. With an
        Idempotency-Key that a stored review holds: 201 with that review again.

        413 if the body is larger than the contract allows; else 400 if the key
        is malformed, then 400 if the body is not JSON, 422 if it is not a review
        of an existing film or the key was used for another review.
        """
        # A declared length bounds the read (WSGI forbids reading past it: wsgiref would
        # wait for more); without one (chunked), bounded_stream reads nothing, while
        # gunicorn's input stream ends where the body does. read_body raises 413 past
        # MAX_BODY_BYTES: before the key is read (docs/contract.md).
        stream = req.stream if req.content_length is None else req.bounded_stream
        body = read_body(stream.read)
        header = req.get_header("Idempotency-Key")
        key = parse_idempotency_key([] if header is None else [header])
        film_id, rating = parse_review(body)
        # One statement, which commits by itself (autocommit): one round trip, where
        # BEGIN, INSERT, COMMIT took three. If Postgres got it but its answer is
        # lost (frozen, a timeout: 503), the review may be stored; a client that
        # must know retries with its Idempotency-Key (docs/contract.md, "Writes").
        with self.pool.acquire() as connection, connection.cursor() as cursor:
            if key is None:
                cursor.execute(INSERT_REVIEW, (rating, film_id))
                review = cursor.fetchone()
            else:
                review = insert_keyed(cursor, film_id, rating, key)
        if review is None:
            raise ContractError(422, UNKNOWN_FILM)
        check_replay(review, film_id, rating)
        resp.status = falcon.HTTP_201
        resp.media = dict(review)

    on_request = on_options = method_not_allowed("POST")


def insert_keyed(cursor, film_id, rating, key):
    """The review stored under key: inserted now, or by an earlier request with
    the key; None if there is none and the film does not exist."""
    cursor.execute(INSERT_KEYED_REVIEW, (rating, key, film_id, key))
    review = cursor.fetchone()
    if review is None:
        cursor.execute(SELECT_KEYED_REVIEW, (key,))
        review = cursor.fetchone()
    return review
