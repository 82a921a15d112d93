"""What both async apps do to run a view to its end (each app's db.py
finished(), which differs only in what its framework has read by then).

Why: when a client disconnects, the server cancels the request's task, and
asyncpg then cancels the query under way with a CancelRequest on a connection
of its own. Behind a transaction pooler that request can reach a server
connection that already serves another client, and fail that client's
statement (docs/deploy.md#pgbouncer). Shielded, the view finishes as a sync
worker's does (its answer goes nowhere), and nothing is cancelled."""

import asyncio


def shielded(coroutine):
    """Await coroutine to its end even if the request's task is cancelled (its
    client went away): the view then finishes as a sync worker's does, and its
    answer goes nowhere. Its error, if its client has gone, is dropped with its
    answer rather than logged as never retrieved."""
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return asyncio.shield(task)
