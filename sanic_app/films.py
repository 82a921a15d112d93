"""GET /films/ and GET /films/<film_id>/."""

from sanic import Blueprint, json

from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id, parse_year

from .db import acquire, finished

blueprint = Blueprint("films")

SELECT_FILMS = """SELECT film_id, release_year, title
                    FROM film
                   WHERE release_year > $1
                ORDER BY film_id"""

SELECT_FILM = """SELECT film_id, release_year, title
                   FROM film
                  WHERE film_id = $1"""


@blueprint.route("/films", methods=("GET", "HEAD"))  # Sanic adds no HEAD to a GET
@finished
async def get_films(request):
    """Films released after ?year.gt (default 2000), keyed by film_id.

    400 if year.gt is not an integer.
    """
    # request.args drops blank values: ?year.gt= would be the default, not a 400.
    year = parse_year(request.get_args(keep_blank_values=True).get("year.gt"))
    async with acquire(request) as connection:
        films = await connection.fetch(SELECT_FILMS, year)
    return json(
        {
            film["film_id"]: {"release_year": film["release_year"], "title": film["title"]}
            for film in films
        }
    )


@blueprint.route("/films/<film_id>", methods=("GET", "HEAD"))
@finished
async def get_film(request, film_id):
    """One film. 404 if the id is not a positive integer or names no film."""
    film_id = parse_film_id(film_id)
    async with acquire(request) as connection:
        film = await connection.fetchrow(SELECT_FILM, film_id)
    if film is None:
        raise ContractError(404, FILM_NOT_FOUND)
    return json(dict(film))
