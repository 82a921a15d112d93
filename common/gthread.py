"""gunicorn config for the sync apps: the gthread worker tells the app how long
each request waited in its queue.

    gunicorn --worker-class gthread --config python:common.gthread ...

The gthread worker reads which connections have a request and queues them for
its threads; with every thread busy, a request waits there, where the app
cannot see it (past capacity, seconds: docs/reliability.md, "Past
capacity"). This hook notes when each connection is queued, and the thread
that serves it hands that to common/admission.py, so that the app (its
pool's admit(), before any work) refuses a request that spent its budget in
the queue. Nothing else of the worker changes.
"""

import time

from common import admission


def post_worker_init(worker):
    """gunicorn's hook, in each worker process once it has loaded the app."""
    enqueue_req, handle = worker.enqueue_req, worker.handle

    def queue(conn):
        conn.queued_at = time.monotonic()
        enqueue_req(conn)

    def serve(conn):
        admission.queued_at(getattr(conn, "queued_at", None))
        try:
            return handle(conn)
        finally:
            admission.queued_at(None)

    # The worker submits self.handle to its threads: these instance attributes
    # are what it finds.
    worker.enqueue_req, worker.handle = queue, serve
