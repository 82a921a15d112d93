"""The extensions, made once and bound to the app in create_app()."""

import redis
from celery import Celery
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy

db = SQLAlchemy()
login_manager = LoginManager()
celery = Celery(__name__)
cache = redis.from_url("redis://localhost:6379/0")
