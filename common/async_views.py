"""What both async apps do to run a view to its end: finishing() makes the
decorator each app's db.py calls finished, given what its framework has not
read of the request by the time the view runs.

Why: when a client disconnects, the server cancels the request's task, and
asyncpg then cancels the query under way with a CancelRequest on a connection
of its own. Behind a transaction pooler that request can reach a server
connection that already serves another client, and fail that client's
statement (docs/deploy.md#pgbouncer). Shielded, the view finishes as a sync
worker's does (its answer goes nowhere), and nothing is cancelled."""

import asyncio
import functools


def finishing(read_first=None):
    """A decorator: the view, run to its end even if its client goes away
    first. read_first(), if given, is awaited before, unshielded: what the
    framework has not read of the request yet (Quart: a POST's body), so that a
    client that leaves before sending all of it costs nothing more."""

    def finished(view):
        @functools.wraps(view)
        async def shielded_view(*args, **kwargs):
            if read_first is not None:
                await read_first()
            return await shielded(view(*args, **kwargs))

        return shielded_view

    return finished


def shielded(coroutine):
    """Await coroutine to its end even if the request's task is cancelled (its
    client went away): the view then finishes as a sync worker's does, and its
    answer goes nowhere. Its error, if its client has gone, is dropped with its
    answer rather than logged as never retrieved."""
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return asyncio.shield(task)
