"""GET /health."""

from quart import Blueprint

from .db import acquire, finished

blueprint = Blueprint("health", __name__)

SELECT_ONE = "SELECT 1"


@blueprint.get("/health")
@finished
async def health():
    """200 when the database answers; 503 (see errors.py) when it does not."""
    async with acquire() as connection:
        await connection.execute(SELECT_ONE)
    return {"status": "ok"}
