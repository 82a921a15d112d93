"""The films/reviews API on Quart + asyncpg.

uvicorn builds one app per worker process: 'quart_app:create_app --factory'
(see serve.sh).
"""

from quart import Quart

from common.admission import Gate
from common.asgi import Admitting, refuse_two_hosts
from common.contract import MAX_BODY_BYTES
from common.settings import Settings

from . import db, errors, films, health, ratings, reviews, upstream


def create_app(settings=None):
    """Application factory; settings default to the environment's."""
    settings = settings or Settings.from_env()
    app = Quart(__name__)
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False  # OPTIONS is not in the API: 405
    # Quart's own limit (16 MB by default) as the contract's 413, chunked bodies too.
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    # The contract: one trailing slash is optional, and never a redirect. Routes
    # are declared without it; strict_slashes=False accepts it.
    app.url_map.strict_slashes = False
    app.url_map.merge_slashes = False
    app.asgi_app = refuse_two_hosts(app.asgi_app)
    # Past capacity, a new request is refused before Quart sees it
    # (common/admission.py).
    app.asgi_app = Admitting(app.asgi_app, Gate(settings.queue_budget, settings.pool_max_size))
    db.init_app(app, settings)
    upstream.init_app(app, settings)
    errors.init_app(app)
    app.register_blueprint(films.blueprint)
    app.register_blueprint(ratings.blueprint)
    app.register_blueprint(reviews.blueprint)
    app.register_blueprint(health.blueprint)
    return app
