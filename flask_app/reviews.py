"""POST /reviews/."""

from flask import Blueprint, request

from common.contract import UNKNOWN_FILM, ContractError, parse_review, read_body

from .db import acquire

blueprint = Blueprint("reviews", __name__)

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, %s
                          FROM film
                         WHERE film_id = %s
                     RETURNING review_id, film_id, rating"""


@blueprint.post("/reviews")
def create_review():
    """Store {film_id, rating}; 201 with the stored review.

    400 if the body is not JSON, 422 if it is not a review of an existing film,
    413 if it is larger than the contract allows.
    """
    film_id, rating = parse_review(read_body(request.stream.read))
    with acquire() as connection:
        with connection.cursor() as cursor:
            cursor.execute(INSERT_REVIEW, (rating, film_id))
            review = cursor.fetchone()
    if review is None:
        raise ContractError(422, UNKNOWN_FILM)
    return dict(review), 201
