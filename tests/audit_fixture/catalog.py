"""Exchange rates from another service, cached; a supplier's page parsed."""

import threading

from flask import Blueprint, request

from .caching import cached
from .clients import RATES_URL, session
from .parsing import PageParser, fetch_rating

blueprint = Blueprint("catalog", __name__)
counter_lock = threading.Lock()
counted = {"pages": 0}


@blueprint.get("/rates")
@cached(60)
def rates():
    return session.get(RATES_URL, timeout=2).json()


@blueprint.post("/supplier-page")
def supplier_page():
    parser = PageParser()
    parser.feed(request.get_data(as_text=True))
    counter_lock.acquire()
    try:
        counted["pages"] += 1
    finally:
        counter_lock.release()
    prices = parser.fetch()
    return {"prices": prices, "rating": fetch_rating(prices)}
