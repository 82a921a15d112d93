"""What runs around every request: the tenant, read from redis first; the
error handler, which gives the session's connection back."""

from flask import g, request

from .extensions import cache, db


def load_tenant():
    g.tenant = cache.get(f"tenant:{request.host}")


def server_error(error):
    db.session.rollback()
    return {"error": "internal error"}, 500
