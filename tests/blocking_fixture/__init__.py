"""A small Flask app for tests/docs/test_blocking_audit.py, read by
tools/blocking_audit.py and never imported or run: every blocking call the
audit must find is on a line marked `# planted: KIND`, and nothing else here
blocks (awaited calls, a function handed to a thread, one no view reaches)."""

from flask import Flask

from . import views
from .views import Items, legacy


def create_app():
    app = Flask(__name__)
    app.register_blueprint(views.blueprint)
    app.add_url_rule("/legacy", view_func=legacy)
    app.add_url_rule("/items", view_func=Items.as_view("items"))
    return app
