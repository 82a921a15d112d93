"""A client that disconnects while its POST /reviews/ waits on the database
(docs/migration/real-services.md, "A client that disconnects"). The review table is locked,
so the INSERT waits; the client closes its socket. A gunicorn thread
(Flask, Falcon) does not notice until it writes the answer; under uvicorn
(Quart) and Sanic's server the handler's task is cancelled, but the view is
shielded (finished() in their db.py): asyncpg sends no CancelRequest, which a
transaction pooler could pass to another client's statement. In all four
apps the INSERT goes on once the lock is released, and commits. The contract
holds (the client got no answer, so no 201 promised a row). Each wait below
is polled, bounded well inside the statement timeout (DATABASE_TIMEOUT, 5 s),
which would cancel the INSERT by itself."""

import json
import socket
import urllib.parse

import psycopg2

from tests.corpus import REVIEW
from tests.helpers import query, wait_until

WAITING_INSERT = """SELECT count(*) FROM pg_stat_activity
                     WHERE query LIKE 'INSERT INTO review%%' AND state = 'active'"""


def waiting(db):
    return query(db, WAITING_INSERT)[0][0]


def stored(db):
    return len(query(db, "SELECT review_id FROM review"))


def post_and_disconnect(url, until):
    """Send a review, wait until `until()` holds, close the socket unanswered."""
    address = urllib.parse.urlsplit(url)
    body = json.dumps(REVIEW).encode()
    head = f"POST /reviews/ HTTP/1.1\r\nHost: {address.netloc}\r\n"
    head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    with socket.create_connection((address.hostname, address.port), timeout=5) as client:
        client.sendall(head.encode() + body)
        assert wait_until(until, 3), "the INSERT never waited on the lock"


def test_a_disconnected_insert_runs_to_its_end_in_every_app(server, db, database_url):
    lock = psycopg2.connect(database_url)
    try:
        with lock.cursor() as cursor:
            cursor.execute("LOCK TABLE review IN ACCESS EXCLUSIVE MODE")
        post_and_disconnect(server.url, lambda: waiting(db) == 1)
        assert not wait_until(lambda: waiting(db) == 0, 2), "the INSERT was cancelled"
    finally:
        lock.commit()  # the lock goes; a waiting INSERT goes on
        lock.close()
    # The INSERT runs now, then its COMMIT: poll for the row.
    assert wait_until(lambda: stored(db) == 1, 5)
