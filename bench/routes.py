"""The routes a benchmark measures, one object each: what wrk sends, how the
answer is verified before measuring, the SQL pgbench runs for the database's
ceiling, and the article's figures. Adding a route is adding one Route here
(and its Lua script, if it sends more than a GET).

The SQL is the text every app runs (tests/test_harness.py checks it
against each app's constants) with pgbench variables for the parameters.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    key: str  # the name --routes uses
    label: str  # the article's name for it
    path: str
    script: str  # in lua/: report.lua (GET) or one that sets the request first
    body: bytes | None  # what a POST sends: the same as the Lua script's
    status: int  # the status verification expects
    check: Callable  # parsed JSON -> list of problems (empty: fit to measure)
    pgbench: str  # the same SQL as the apps', for pgbench
    article: tuple  # (Flask, Quart) req/s in the article, wrk -c 20 -d 5m

    @property
    def method(self):
        return "POST" if self.body else "GET"


def check_film(document):
    if not isinstance(document, dict) or document.get("film_id") != 995:
        return ["body is not film 995"]
    return check_film_fields(document)


def check_film_fields(film):
    problems = []
    if not isinstance(film.get("title"), str):
        problems.append("title is not a string")
    if not isinstance(film.get("release_year"), int):
        problems.append("release_year is not an integer")
    return problems


def check_films(document):
    if not isinstance(document, dict) or not document:
        return ["body is not a non-empty object of films"]
    if not all(key.isdigit() for key in document):
        return ["keys are not film ids"]
    return check_film_fields(next(iter(document.values())))


def check_review(document):
    if not isinstance(document, dict) or not isinstance(document.get("review_id"), int):
        return ["body has no integer review_id"]
    if (document.get("film_id"), document.get("rating")) != (995, 4):
        return [f"body is not the review sent: {document}"]
    return []


ROUTES = {
    route.key: route
    for route in [
        Route(
            key="film",
            label="GET /films/995/",
            path="/films/995/",
            script="report.lua",
            body=None,
            status=200,
            check=check_film,
            pgbench="""\\set film_id 995
SELECT film_id, release_year, title
                   FROM film
                  WHERE film_id = :film_id;
""",
            article=(330, 1160),
        ),
        Route(
            key="films",
            label="GET /films/",
            path="/films/",
            script="report.lua",
            body=None,
            status=200,
            check=check_films,
            pgbench="""\\set year 2000
SELECT film_id, release_year, title
                    FROM film
                   WHERE release_year > :year
                ORDER BY film_id;
""",
            article=(99, 195),
        ),
        Route(
            key="review",
            label="POST /reviews/",
            path="/reviews/",
            script="post.lua",
            body=b'{"film_id": 995, "rating": 4}',
            status=201,
            check=check_review,
            pgbench="""\\set film_id 995
\\set rating 4
INSERT INTO review (film_id, rating)
                        SELECT film_id, :rating
                          FROM film
                         WHERE film_id = :film_id
                     RETURNING review_id, film_id, rating;
""",
            article=(325, 1114),
        ),
    ]
}
