"""GET /health."""

from .errors import method_not_allowed

SELECT_ONE = "SELECT 1"


class Health:
    def __init__(self, pool):
        self.pool = pool

    def on_get(self, req, resp):
        """200 when the database answers; 503 (see errors.py) when it does not."""
        with self.pool.acquire() as connection:
            with connection.cursor() as cursor:
                cursor.execute(SELECT_ONE)
        resp.media = {"status": "ok"}

    on_head = on_get
    on_request = on_options = method_not_allowed("GET", "HEAD")
