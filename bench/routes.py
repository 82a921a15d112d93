"""The routes a benchmark measures, one object each: what the load generator
sends, how the answer is verified before measuring, the SQL pgbench runs for
the database's ceiling, and the article's figures. Adding a route is adding
one Route here (and its Lua script, if it sends more than a GET).

The SQL is the text every app runs (tests/harness/test_harness.py checks it
against each app's constants) with pgbench variables for the parameters.

The ratings route (GET /films/995/ratings/) is measured only when asked
(--routes ratings, or --fan-out): it needs the rating sources a run starts
(bench/sut/sources.py).

The reads ask for film 995 of the sample data. The write posts its reviews to
the run's own film (bench/sut/run_film.py): ROUTES["review"] names film 995
until a run gives it its film with writing_to().
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

READ_FILM = 995  # the article's film


@dataclass(frozen=True)
class Route:
    key: str  # the name --routes uses
    label: str  # the article's name for it
    path: str
    script: str  # in lua/: report.lua (GET), or post.lua, which takes the body
    status: int  # the status verification expects
    check: Callable  # (parsed JSON, route) -> list of problems (empty: fit to measure)
    pgbench: str  # the same SQL as the apps', for pgbench, given :film_id
    article: tuple | None  # (Flask, Quart) req/s in the article, wrk -c 20 -d 5m; None: not in it
    rating: int | None = None  # what a POST /reviews/ sends, of film_id
    film_id: int = READ_FILM  # the film it reads, or reviews
    default: bool = True  # measured when --routes is not given
    fans_out: bool = False  # asks the rating sources (UPSTREAM_FANOUT) of every app

    @property
    def method(self):
        return "POST" if self.body else "GET"

    @property
    def writes(self):
        return self.rating is not None

    @property
    def body(self):
        """What a POST sends (None for a GET)."""
        if not self.writes:
            return None
        return json.dumps({"film_id": self.film_id, "rating": self.rating}).encode()

    def writing_to(self, film_id):
        """This route with its writes going to film_id (a read is unchanged)."""
        return replace(self, film_id=film_id) if self.writes else self

    def pgbench_script(self):
        """pgbench's script: the film, then the route's SQL."""
        return f"\\set film_id {self.film_id}\n{self.pgbench}"


def check_film(document, route):
    if not isinstance(document, dict) or document.get("film_id") != route.film_id:
        return [f"body is not film {route.film_id}"]
    return check_film_fields(document)


def check_film_fields(film):
    problems = []
    if not isinstance(film.get("title"), str):
        problems.append("title is not a string")
    if not isinstance(film.get("release_year"), int):
        problems.append("release_year is not an integer")
    return problems


def check_films(document, route):
    if not isinstance(document, dict) or not document:
        return ["body is not a non-empty object of films"]
    if not all(key.isdigit() for key in document):
        return ["keys are not film ids"]
    return check_film_fields(next(iter(document.values())))


def check_review(document, route):
    if not isinstance(document, dict) or not isinstance(document.get("review_id"), int):
        return ["body has no integer review_id"]
    if (document.get("film_id"), document.get("rating")) != (route.film_id, route.rating):
        return [f"body is not the review sent: {document}"]
    return []


def check_ratings(document, route):
    """The film, and an entry for every source the app was given: a rating,
    or null and named unavailable (a sequential app's calls past its
    deadline, fan-out x delay over UPSTREAM_TIMEOUT, are the app's figure,
    not a fault); at least the first source answered."""
    problems = check_film(document, route)
    if problems:
        return problems
    ratings, unavailable = document.get("ratings"), document.get("unavailable")
    if not isinstance(ratings, dict) or not ratings or not isinstance(unavailable, list):
        return ["ratings is not a non-empty object of sources, with an unavailable list"]
    first = next(iter(ratings.values()))
    if not isinstance(first, int | float) or isinstance(first, bool):
        return [f"the first source did not answer: {unavailable}"]
    return []


ROUTES = {
    route.key: route
    for route in [
        Route(
            key="film",
            label="GET /films/995/",
            path="/films/995/",
            script="report.lua",
            status=200,
            check=check_film,
            pgbench="""SELECT film_id, release_year, title
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
            status=201,
            check=check_review,
            pgbench="""\\set rating 4
INSERT INTO review (film_id, rating)
                        SELECT film_id, :rating
                          FROM film
                         WHERE film_id = :film_id
                     RETURNING review_id, film_id, rating;
""",
            article=(325, 1114),
            rating=4,
        ),
        Route(
            key="ratings",
            label="GET /films/995/ratings/",
            path="/films/995/ratings/",
            script="report.lua",
            status=200,
            check=check_ratings,
            pgbench="""SELECT f.film_id, f.release_year, f.title,
                                count(r.review_id) AS review_count,
                                round(avg(r.rating), 2)::float8 AS average_rating
                           FROM film f
                      LEFT JOIN review r ON r.film_id = f.film_id
                          WHERE f.film_id = :film_id
                       GROUP BY f.film_id
""",
            article=None,
            default=False,
            fans_out=True,
        ),
    ]
}
DEFAULT_ROUTES = [key for key, route in ROUTES.items() if route.default]
