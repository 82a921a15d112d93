"""GET /films/ and GET /films/<film_id>/."""

from flask import Blueprint, request

from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id, parse_year

from .db import acquire

blueprint = Blueprint("films", __name__)

SELECT_FILMS = """SELECT film_id, release_year, title
                    FROM film
                   WHERE release_year > %s
                ORDER BY film_id"""

SELECT_FILM = """SELECT film_id, release_year, title
                   FROM film
                  WHERE film_id = %s"""


@blueprint.get("/films")
def get_films():
    """Films released after ?year.gt (default 2000), keyed by film_id.

    400 if year.gt is not an integer.
    """
    year = parse_year(request.args.get("year.gt"))
    with acquire() as connection:
        with connection.cursor() as cursor:
            cursor.execute(SELECT_FILMS, (year,))
            films = cursor.fetchall()
    return {
        film["film_id"]: {"release_year": film["release_year"], "title": film["title"]}
        for film in films
    }


@blueprint.get("/films/<film_id>")
def get_film(film_id):
    """One film. 404 if the id is not a positive integer or names no film."""
    film_id = parse_film_id(film_id)
    with acquire() as connection:
        with connection.cursor() as cursor:
            cursor.execute(SELECT_FILM, (film_id,))
            film = cursor.fetchone()
    if film is None:
        raise ContractError(404, FILM_NOT_FOUND)
    return dict(film)
