"""A realistic Flask app for tests/docs/test_blocking_audit.py, read by
tools/blocking_audit.py and never imported or run (Flask-SQLAlchemy,
Flask-Login, Celery, boto3 and redis are not installed): blueprints, models
with a lazy relationship, a user_loader, hooks, a decorator around views, a
Celery task, clients made in one module and used in another, and async views
as a half-migrated Quart app has them. The test lists what blocks."""

from flask import Flask

from . import auth, catalog, files, hooks, live, orders, reports
from .extensions import celery, db, login_manager


def create_app():
    app = Flask(__name__)
    db.init_app(app)
    login_manager.init_app(app)
    celery.conf.update(app.config)
    for module in (auth, catalog, files, live, orders, reports):
        app.register_blueprint(module.blueprint)
    app.before_request(hooks.load_tenant)
    app.register_error_handler(500, hooks.server_error)
    app.add_url_rule("/invoices/<int:order_id>", view_func=files.Invoice.as_view("invoice"))
    return app
