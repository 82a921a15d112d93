"""GET /films/<film_id>/ratings/."""

import asyncio

from quart import Blueprint

from common.async_views import shielded
from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id
from common.ratings import answer

from .db import acquire
from .upstream import sources

blueprint = Blueprint("ratings", __name__)

# The film, its reviews' count and average: one statement, one round trip.
SELECT_FILM_RATINGS = """SELECT f.film_id, f.release_year, f.title,
                                count(r.review_id) AS review_count,
                                round(avg(r.rating), 2)::float8 AS average_rating
                           FROM film f
                      LEFT JOIN review r ON r.film_id = f.film_id
                          WHERE f.film_id = $1
                       GROUP BY f.film_id"""


@blueprint.get("/films/<film_id>/ratings")
async def get_ratings(film_id):
    """One film, its reviews' count and average, and each rating source's
    rating of it: null, and named in unavailable, where a source failed or
    did not answer within UPSTREAM_TIMEOUT.

    404 if the id is not a positive integer or names no film; 502 if every
    source failed, 504 if every source timed out.
    """
    film_id = parse_film_id(film_id)
    # The read runs to its end if the client leaves, as every view's does
    # (db.py, finished); the calls out do not: leaving cancels them.
    film = await shielded(read_film(film_id))
    if film is None:
        raise ContractError(404, FILM_NOT_FOUND)
    return answer(film, await ask_sources(film_id))


async def read_film(film_id):
    """The film's row with its reviews' count and average, or None. The
    connection is back in the pool before the first call out: held while the
    sources answer, it would wait idle, and other requests would wait for it."""
    async with acquire() as connection:
        return await connection.fetchrow(SELECT_FILM_RATINGS, film_id)


async def ask_sources(film_id):
    """{source: its rating, TIMED_OUT or FAILED}, asked all at once within one
    deadline: each call a task of one TaskGroup, so that none outlives the
    request (a client that leaves cancels them all)."""
    fan_out = sources()
    deadline = fan_out.deadline()
    async with asyncio.TaskGroup() as group:
        calls = {
            url: group.create_task(fan_out.fetch_rating(url, film_id, deadline))
            for url in fan_out.urls
        }
    return {url: call.result() for url, call in calls.items()}
