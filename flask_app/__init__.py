"""The films/reviews API on Flask + psycopg2 (through the PoolWrapper).

gunicorn builds one app per worker process: 'flask_app:create_app()'
(see serve.sh).
"""

from flask import Flask

from common.settings import Settings
from common.wsgi import ignore_upgrade

from . import db, errors, films, health, ratings, reviews, upstream


def create_app(settings=None):
    """Application factory; settings default to the environment's."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False  # OPTIONS is not in the API: 405
    # The contract: one trailing slash is optional, and never a redirect. Routes
    # are declared without it; strict_slashes=False accepts it.
    app.url_map.strict_slashes = False
    app.url_map.merge_slashes = False
    app.wsgi_app = ignore_upgrade(app.wsgi_app)
    db.init_app(app, settings)
    upstream.init_app(app, settings)
    errors.init_app(app)
    app.register_blueprint(films.blueprint)
    app.register_blueprint(ratings.blueprint)
    app.register_blueprint(reviews.blueprint)
    app.register_blueprint(health.blueprint)
    return app
