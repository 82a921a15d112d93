"""GET /health."""

from flask import Blueprint

from .db import acquire

blueprint = Blueprint("health", __name__)

SELECT_ONE = "SELECT 1"


@blueprint.get("/health")
def health():
    """200 when the database answers; 503 (see errors.py) when it does not."""
    with acquire() as connection:
        with connection.cursor() as cursor:
            cursor.execute(SELECT_ONE)
    return {"status": "ok"}
