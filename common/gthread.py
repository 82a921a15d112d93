"""gunicorn config for the sync apps: the gthread worker refuses a request that
has waited past its budget, before the app sees it.

    gunicorn --worker-class gthread --config python:common.gthread ...

Past capacity a request waits where the app cannot see it (docs/reliability.md,
"Past capacity"): in the kernel until the worker's main thread reads that its
connection has data (a thread of the app's holds the GIL meanwhile), then in
the worker's queue until one of its threads is free. Its wait is counted from
when its first bytes reached this host: the kernel's receive timestamp
(SO_TIMESTAMPNS), peeked as the main thread queues it. Where that wait stands
past QUEUE_BUDGET (common/admission.py, CoDel's rule):

* the main thread refuses a plain GET whose wait so far, and the queue ahead
  of it at the pace the threads take from it, pass the budget: it reads the
  head, writes the contract's 503 as it is, and keeps the connection alive,
  with no thread, no WSGI environ, no app, no database;
* a thread refuses any request that waited past the budget, before the app.

Each only while the worker has more than twice as many connections as
threads (crowded): fewer clients are past no capacity of the worker's,
however slowly its busy threads let the main thread read them (a closed loop
of 20 on the 52 KB route: the main thread waits for the GIL, and each
refused client asks again at once).

A refusal that goes through the app costs about as much CPU as an answer
(Flask: 0.44 ms of the 1.0 ms a film costs, measured at twice its capacity),
and past capacity CPU is what is short. An admitted request of a crowded
worker carries its wait on to the pool (admission.queued_at), which refuses
a wait for a connection past what is left of the budget; in a worker that
is not crowded its wait starts as its thread takes it: a closed loop of 16
clients on 16 threads sharing 8 connections, on the 52 KB route, waited past
the budget for the GIL and was refused at the pool (3 refusals in 3 s)
while no queue grew.
"""

import socket
import struct
import time
from concurrent import futures

from common import admission
from common.settings import Settings

PEEK = 8192  # bytes of a request head read in the main thread: gunicorn's line limit is 4,094
# Linux's socket option and its control message (Python's socket module names
# neither): the time a packet was received, as a struct timespec.
SO_TIMESTAMPNS = 35
TIMESPEC = struct.Struct("qq")


def post_worker_init(worker):
    """gunicorn's hook, in each worker process once it has loaded the app."""
    budget = Settings.from_env().queue_budget
    standing = admission.Standing(budget)
    pace = admission.Pace()
    enqueue_req, handle_request = worker.enqueue_req, worker.handle_request
    stamped = budget and not worker.cfg.is_ssl
    if stamped:  # accepted connections inherit it
        for listener in worker.sockets:
            listener.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)

    def queue(conn):
        """The main thread: a connection with a request, for the threads."""
        now = time.monotonic()
        head, arrived = peek(conn, now) if stamped else (b"", now)
        conn.queued_at = arrived
        if crowded(worker) and standing.stands:
            if now - arrived + pace.wait(queued(worker)) >= budget:
                if refused_at_once(worker, conn, head):
                    return
        enqueue_req(conn)

    def serve(req, conn):
        """A thread: the parsed request, before the app."""
        started = time.monotonic()
        pace.took(started, queued(worker))
        queued_at = getattr(conn, "queued_at", None)
        waited = started - (queued_at or started)
        crowd = crowded(worker)
        if standing.refuse(waited) and crowd and not admission.exempt(req.path):
            return refuse(req, conn)
        # Not crowded, its wait so far was for the CPU, not in a queue: the
        # pool judges its own queue alone.
        admission.queued_at(queued_at if crowd else started)
        try:
            return handle_request(req, conn)
        finally:
            admission.queued_at(None)

    # The worker's main thread calls self.enqueue_req for each connection
    # that has a request, and its threads self.handle_request with the
    # parsed request: these instance attributes are what it finds.
    worker.enqueue_req, worker.handle_request = queue, serve


def crowded(worker):
    """Whether the worker has more than twice as many connections as threads.
    With fewer, a request waits at most one round of the threads for one:
    not a queue that grows, but the CPU, which a refusal does not give back
    (a closed loop sends the next at once). gunicorn's workers share the
    listener unevenly: a closed loop of 20 clients on 2 x 16 threads put 17
    or more on one worker, and a 52 KB list under the GIL made them wait
    past the budget (CI: 21 refusals of 297, flask)."""
    return worker.nr_conns > 2 * worker.cfg.threads


def queued(worker):
    """The requests waiting for a thread (ThreadPoolExecutor's queue)."""
    return worker.tpool._work_queue.qsize()


def peek(conn, now):
    """(the bytes waiting on conn, up to PEEK; when the first of them reached
    the kernel, in monotonic seconds: now if none has, or if gunicorn holds
    some already)."""
    if conn.initialized and (conn.is_http2 or conn.parser.unreader.buf.getvalue()):
        return b"", now
    try:
        data, ancillary, _, _ = conn.sock.recvmsg(
            PEEK, socket.CMSG_SPACE(TIMESPEC.size), socket.MSG_PEEK | socket.MSG_DONTWAIT
        )
    except OSError:
        return b"", now
    for level, kind, stamp in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = TIMESPEC.unpack(stamp[: TIMESPEC.size])
            return data, now - max(0.0, time.time() - seconds - nanoseconds / 1e9)
    return data, now


def refused_at_once(worker, conn, head):
    """Refuse the request on conn in the main thread, if head is a plain GET
    that has arrived whole and alone: read it, write the 503, and give the
    connection back to the worker's poller, kept alive. No thread, no parser:
    the cheapest answer gunicorn can give (anything else: False, and the
    request is queued, to be judged by the thread that takes it)."""
    if not admission.plain_get(head) or len(worker.keepalived_conns) >= worker.max_keepalived:
        return False
    try:
        conn.sock.recv(len(head), socket.MSG_DONTWAIT)
        sent = conn.sock.send(admission.KEPT_ALIVE, socket.MSG_DONTWAIT)
    except OSError:
        sent = 0
    if sent != len(admission.KEPT_ALIVE):  # a full buffer or a gone client: not worth a thread
        worker.nr_conns -= 1
        conn.close()
        return True
    conn.init()  # a new connection: its parser, for the next request
    done = futures.Future()
    done.set_result(True)
    worker.finish_request(conn, done)  # kept alive: back to the poller
    return True


def refuse(req, conn):
    """Write the 503; whether the connection may carry another request (the
    worker's answer from handle_request: gunicorn then reads past the body,
    as after any answer). One whose client waits for 100 Continue before it
    sends its body is closed: a thread must not wait for that body."""
    keep = not req.should_close() and not continues(req)
    head = admission.REFUSAL_HEAD + ("" if keep else "Connection: close\r\n") + "\r\n"
    conn.sock.sendall(head.encode() + (b"" if req.method == "HEAD" else admission.REFUSAL))
    return keep


def continues(req):
    return any(name == "EXPECT" and value.lower() == "100-continue" for name, value in req.headers)
