"""POST /reviews/."""

from sanic import Blueprint, json

from common.contract import UNKNOWN_FILM, ContractError, parse_review

from .db import acquire

blueprint = Blueprint("reviews")

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, $1
                          FROM film
                         WHERE film_id = $2
                     RETURNING review_id, film_id, rating"""


@blueprint.post("/reviews")
async def create_review(request):
    """Store {film_id, rating}; 201 with the stored review.

    400 if the body is not JSON, 422 if it is not a review of an existing film,
    413 if it is larger than the contract allows.
    """
    # Sanic has read the body before calling the handler, and answered 413 if
    # it was larger than REQUEST_MAX_SIZE, whether or not it declared its length.
    film_id, rating = parse_review(request.body)
    # In a transaction, as psycopg2 runs it: if Postgres stops answering before
    # the COMMIT, the client's timeout (503) leaves nothing behind, where a lone
    # statement would commit whenever the server got to it.
    async with acquire(request) as connection, connection.transaction():
        review = await connection.fetchrow(INSERT_REVIEW, rating, film_id)
    if review is None:
        raise ContractError(422, UNKNOWN_FILM)
    return json(dict(review), status=201)
