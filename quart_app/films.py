"""GET /films/ and GET /films/<film_id>/."""

from quart import Blueprint, request

from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id, parse_year

from .db import acquire, finished

blueprint = Blueprint("films", __name__)

SELECT_FILMS = """SELECT film_id, release_year, title
                    FROM film
                   WHERE release_year > $1
                ORDER BY film_id"""

SELECT_FILM = """SELECT film_id, release_year, title
                   FROM film
                  WHERE film_id = $1"""


@blueprint.get("/films")
@finished
async def get_films():
    """Films released after ?year.gt (default 2000), keyed by film_id.

    400 if year.gt is not an integer.
    """
    year = parse_year(request.args.get("year.gt"))
    async with acquire() as connection:
        films = await connection.fetch(SELECT_FILMS, year)
    return {
        film["film_id"]: {"release_year": film["release_year"], "title": film["title"]}
        for film in films
    }


@blueprint.get("/films/<film_id>")
@finished
async def get_film(film_id):
    """One film. 404 if the id is not a positive integer or names no film."""
    film_id = parse_film_id(film_id)
    async with acquire() as connection:
        film = await connection.fetchrow(SELECT_FILM, film_id)
    if film is None:
        raise ContractError(404, FILM_NOT_FOUND)
    return dict(film)
