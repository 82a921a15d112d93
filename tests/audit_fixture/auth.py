"""Logging in: Flask-Login loads the user on each request that reads current_user."""

from flask import Blueprint, request
from flask_login import current_user, login_required, login_user

from .extensions import db, login_manager
from .models import User

blueprint = Blueprint("auth", __name__)


@login_manager.user_loader
def load_user(user_id):
    return db.session.get(User, int(user_id))


@blueprint.post("/login")
def login():
    user = db.session.scalars(db.select(User).filter_by(email=request.form["email"])).first()
    login_user(user)
    return {"id": user.id}


@blueprint.get("/me")
@login_required
def me():
    return {"email": current_user.email, "orders": len(current_user.orders)}
