"""GET /films/<film_id>/ratings/: what the four apps share of it.

Each app asks the rating sources (UPSTREAM_FANOUT) its own way, which is the
lesson of its ratings.py: Flask and Falcon one after another on httpx's
Client, Quart and Sanic all at once on aiohttp's ClientSession, every call a
task of one TaskGroup. (httpx's AsyncClient would keep one API on both sides,
as psycopg 3 would for the database; it took five times aiohttp's CPU per
request here: docs/migration.md.) The two clients are common/sources.py
and common/async_sources.py, with one shape; what is neither's is here, once:
the URL a source is asked at, what its answer must be, and the route's answer
made from every source's outcome.

A source's outcome is its rating (a number from 1 to 5), TIMED_OUT (no answer
by the fan-out's deadline, UPSTREAM_TIMEOUT after it began; a sync app does
not ask a source once the deadline has passed), or FAILED (refused, reset,
or an answer that is not 200 with that film's rating: a redirect too, never
followed, so that a source cannot send an app to another host; or an answer
longer than MAX_BODY). Which sources answer
in time depends on how an app asks: one after another, a source after a slow
one gets what is left of the deadline; all at once, each gets all of it.
"""

import enum
import json

from common.contract import NO_RATING_SOURCE, NO_RATING_SOURCE_IN_TIME, ContractError

# A worker's calls in flight at most; a call beyond waits for a connection,
# within its deadline. Above what a measured run asks of one worker (100
# clients on one event loop at a fan-out of 10: 1,000 calls), so that the
# client is never the bound; each idle connection is kept KEEPALIVE seconds.
MAX_CONNECTIONS = 1024
KEEPALIVE = 5.0  # httpx's default; aiohttp's is 15
# The most bytes a source's answer may hold; more is a failed source, read no
# further (the contract's answer is about 35 bytes: a 10 MB one grew a sync
# worker by 17 MiB). Counted as they arrive: neither client asks for, nor
# inflates, a compressed answer, which could grow a thousandfold once read.
MAX_BODY = 4096
# Sent with every call: a source that compresses anyway sends what is not JSON.
HEADERS = {"Accept-Encoding": "identity"}


class Unavailable(enum.Enum):
    TIMED_OUT = "timed out"
    FAILED = "failed"


TIMED_OUT = Unavailable.TIMED_OUT
FAILED = Unavailable.FAILED


def rating_url(source, film_id):
    """Where a source answers its rating of a film (upstream/: python -m upstream)."""
    return f"{source}/films/{film_id}/rating"


def rating_of(status, body, film_id):
    """A source's answer -> its rating; FAILED unless it is a 200 whose body is
    {"film_id": film_id, "rating": a number from 1 to 5}."""
    if status != 200:
        return FAILED
    try:
        document = json.loads(body)
    except ValueError:  # includes UnicodeDecodeError and JSONDecodeError
        return FAILED
    if not isinstance(document, dict) or not _same_id(document.get("film_id"), film_id):
        return FAILED
    rating = document.get("rating")
    if isinstance(rating, bool) or not isinstance(rating, int | float) or not 1 <= rating <= 5:
        return FAILED  # NaN and Infinity too: neither is within 1 to 5
    return rating


def answer(film, outcomes):
    """The route's answer: the film, its reviews' count and average, every
    source's rating (None for one that failed or timed out) and the sources
    that did, in UPSTREAM_FANOUT's order. film: the row of each app's
    SELECT_FILM_RATINGS; outcomes: {source: its outcome}.

    Raises ContractError when every source failed: 504 if the deadline ended
    the fan-out (a source timed out), 502 if every source refused or answered
    amiss. Not "504 if every one timed out": a sync app asks no source once
    the deadline has passed, so it cannot tell whether the ones after a hung
    source would have refused; the concurrent apps can, and would answer 502
    where the sync ones answer 504 (docs/contract.md). With no source
    configured the answer has no rating, and nothing failed.
    """
    unavailable = [source for source, outcome in outcomes.items() if failed(outcome)]
    if outcomes and len(unavailable) == len(outcomes):
        if TIMED_OUT in outcomes.values():
            raise ContractError(504, NO_RATING_SOURCE_IN_TIME)
        raise ContractError(502, NO_RATING_SOURCE)
    return {
        "film_id": film["film_id"],
        "release_year": film["release_year"],
        "title": film["title"],
        "reviews": {"count": film["review_count"], "average": film["average_rating"]},
        "ratings": {
            source: None if failed(outcome) else outcome for source, outcome in outcomes.items()
        },
        "unavailable": unavailable,
    }


def failed(outcome):
    """Whether a source's outcome is TIMED_OUT or FAILED rather than a rating."""
    return isinstance(outcome, Unavailable)


def _same_id(value, film_id):
    return isinstance(value, int) and not isinstance(value, bool) and value == film_id
