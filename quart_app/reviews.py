"""POST /reviews/."""

from quart import Blueprint, request

from common.contract import UNKNOWN_FILM, ContractError, parse_review

from .db import acquire

blueprint = Blueprint("reviews", __name__)

# Inserts nothing, and returns no row, when the film does not exist.
INSERT_REVIEW = """INSERT INTO review (film_id, rating)
                        SELECT film_id, $1
                          FROM film
                         WHERE film_id = $2
                     RETURNING review_id, film_id, rating"""


@blueprint.post("/reviews")
async def create_review():
    """Store {film_id, rating}; 201 with the stored review.

    400 if the body is not JSON, 422 if it is not a review of an existing film,
    413 if it is larger than the contract allows.
    """
    # get_data() keeps at most MAX_CONTENT_LENGTH bytes (see __init__.py) and
    # raises 413 beyond, whether or not the body declared its length; 408 if it
    # takes more than BODY_TIMEOUT (60) seconds to arrive.
    film_id, rating = parse_review(await request.get_data())
    # In a transaction, as psycopg2 runs it: if Postgres stops answering before
    # the COMMIT, the client's timeout (503) leaves nothing behind, where a lone
    # statement would commit whenever the server got to it.
    async with acquire() as connection, connection.transaction():
        review = await connection.fetchrow(INSERT_REVIEW, rating, film_id)
    if review is None:
        raise ContractError(422, UNKNOWN_FILM)
    return dict(review), 201
