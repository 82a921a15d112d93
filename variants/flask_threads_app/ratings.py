"""GET /films/<film_id>/ratings/, its sources asked all at once from threads."""

from flask import current_app

from common.contract import FILM_NOT_FOUND, ContractError, parse_film_id
from common.ratings import answer
from flask_app.ratings import read_film
from flask_app.upstream import sources


def get_ratings(film_id):
    """flask_app's view (flask_app/ratings.py), but for ask_sources below."""
    film_id = parse_film_id(film_id)
    film = read_film(film_id)
    if film is None:
        raise ContractError(404, FILM_NOT_FOUND)
    return answer(film, ask_sources(film_id))


def ask_sources(film_id):
    """{source: its rating, TIMED_OUT or FAILED}, asked all at once within one
    deadline: each call in a thread of the worker's pool, the sync Sources' fetch_rating()
    unchanged (httpx's Client is safe to share between threads). Each call
    ends by the deadline, so the wait for the last ends by it too."""
    fan_out = sources()
    threads = current_app.extensions["fan-out threads"]
    deadline = fan_out.deadline()
    calls = {
        url: threads.submit(fan_out.fetch_rating, url, film_id, deadline) for url in fan_out.urls
    }
    return {url: call.result() for url, call in calls.items()}
