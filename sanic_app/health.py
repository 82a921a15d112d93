"""GET /health."""

from sanic import Blueprint, json

from .db import acquire, finished

blueprint = Blueprint("health")

SELECT_ONE = "SELECT 1"


@blueprint.route("/health", methods=("GET", "HEAD"))
@finished
async def health(request):
    """200 when the database answers; 503 (see errors.py) when it does not."""
    async with acquire(request) as connection:
        await connection.execute(SELECT_ONE)
    return json({"status": "ok"})
