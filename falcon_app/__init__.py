"""The films/reviews API on Falcon + psycopg2 (through the PoolWrapper).

gunicorn builds one app per worker process: 'falcon_app:get_app()'
(see serve.sh).
"""

import json
from functools import partial

import falcon
import falcon.media

from common.settings import Settings

from . import db, errors, films, health, ratings, reviews, upstream


def create_app(pool, sources):
    """Application factory: the routes, each resource given the pool, and the
    rating sources (common/ratings.py) to the one that asks them."""
    app = falcon.App()
    # Methods a resource does not declare, OPTIONS included, go to its on_request:
    # 405 with the contract's Allow (see errors.method_not_allowed).
    app.router_options.default_to_on_request = True
    # The contract: one trailing slash is optional, and never a redirect. Routes
    # are declared without it; Falcon strips one from the request path.
    app.req_options.strip_url_path_trailing_slash = True
    # Compact JSON, as the other three send: the same bytes for a fair benchmark.
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = falcon.media.JSONHandler(
        dumps=partial(json.dumps, separators=(",", ":"))
    )
    errors.init_app(app)
    app.add_route("/films", films.Films(pool))
    app.add_route("/films/{film_id}", films.Film(pool))
    app.add_route("/films/{film_id}/ratings", ratings.Ratings(pool, sources))
    app.add_route("/reviews", reviews.Reviews(pool))
    app.add_route("/health", health.Health(pool))
    return app


def get_app():
    """The app, with a pool and the rating sources configured by the
    environment (gunicorn calls this)."""
    settings = Settings.from_env()
    return create_app(db.open_pool(settings), upstream.open_sources(settings))
