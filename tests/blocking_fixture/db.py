"""The fixture's own pool, as flask_app/db.py's."""

from flask import current_app


def acquire():
    return current_app.extensions["pool"].acquire()
