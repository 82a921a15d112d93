"""GET /films/ and GET /films/<film_id>/."""

from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id, parse_year

from .errors import method_not_allowed

SELECT_FILMS = """SELECT film_id, release_year, title
                    FROM film
                   WHERE release_year > %s
                ORDER BY film_id"""

SELECT_FILM = """SELECT film_id, release_year, title
                   FROM film
                  WHERE film_id = %s"""


class Films:
    def __init__(self, pool):
        self.pool = pool

    def on_get(self, req, resp):
        """Films released after ?year.gt (default 2000), keyed by film_id.

        400 if year.gt is not an integer.
        """
        # get_param would return the last of repeated values; the contract takes
        # the first. A blank value is kept (keep_blank_qs_values), so it is a 400.
        years = req.get_param_as_list("year.gt")
        year = parse_year(years[0] if years else None)
        with self.pool.acquire() as connection:
            with connection.cursor() as cursor:
                cursor.execute(SELECT_FILMS, (year,))
                films = cursor.fetchall()
        resp.media = {
            film["film_id"]: {"release_year": film["release_year"], "title": film["title"]}
            for film in films
        }

    on_head = on_get  # Falcon sends the headers without the body
    on_request = on_options = method_not_allowed("GET", "HEAD")


class Film:
    def __init__(self, pool):
        self.pool = pool

    # A plain {film_id} field, not {film_id:int}: Falcon's int converter accepts
    # some whitespace and would answer its own 404 for the rest; parse_film_id
    # is the contract's rule in every app.
    def on_get(self, req, resp, film_id):
        """One film. 404 if the id is not a positive integer or names no film."""
        film_id = parse_film_id(film_id)
        with self.pool.acquire() as connection:
            with connection.cursor() as cursor:
                cursor.execute(SELECT_FILM, (film_id,))
                film = cursor.fetchone()
        if film is None:
            raise ContractError(404, FILM_NOT_FOUND)
        resp.media = dict(film)

    on_head = on_get
    on_request = on_options = method_not_allowed("GET", "HEAD")
