"""POST /reviews/."""

import falcon

from common.contract import UNKNOWN_FILM, ContractError, parse_review, read_body

from .errors import method_not_allowed

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, %s
                          FROM film
                         WHERE film_id = %s
                     RETURNING review_id, film_id, rating"""


class Reviews:
    def __init__(self, pool):
        self.pool = pool

    def on_post(self, req, resp):
        """Store {film_id, rating}; 201 with the stored review.

        400 if the body is not JSON, 422 if it is not a review of an existing film,
        413 if it is larger than the contract allows.
        """
        # A declared length bounds the read (WSGI forbids reading past it: wsgiref would
        # wait for more); without one (chunked), bounded_stream reads nothing, while
        # gunicorn's input stream ends where the body does.
        stream = req.stream if req.content_length is None else req.bounded_stream
        film_id, rating = parse_review(read_body(stream.read))
        with self.pool.acquire() as connection:
            with connection.cursor() as cursor:
                cursor.execute(INSERT_REVIEW, (rating, film_id))
                review = cursor.fetchone()
        if review is None:
            raise ContractError(422, UNKNOWN_FILM)
        resp.status = falcon.HTTP_201
        resp.media = dict(review)

    on_request = on_options = method_not_allowed("POST")
