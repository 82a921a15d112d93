"""The database changes under a running app: an online migration changes a
column's type, VACUUM FULL rewrites a table, an operator sets the server's
defaults (ALTER DATABASE, ALTER ROLE), the review_id sequence runs out. Every
app, under its production server (two workers), on a Postgres of this
module's own (conftest's `postgres`), answers as the contract says through
each, and stores what it answers 201 and nothing else.

The operator's settings hold for the whole module, set before the apps
connect: transactions serializable by default, under which a keyed write's
ON CONFLICT that meets a concurrent insert fails (40001) where READ COMMITTED
waits and reads; and a statement_timeout stricter than the apps' own. Each app
pins what it needs when it connects (session_init, in each db.py)."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg2
import pytest

from common import contract
from db import roles
from tests.contract.test_idempotency import raw_post
from tests.faults import Load, assert_ledger_holds, get, post
from tests.helpers import port_of, query, serve
from tools.serve import APPS

pytestmark = pytest.mark.slow  # apps on a Postgres of their own

OPERATOR_TIMEOUT = 1  # seconds: ALTER ROLE ... SET statement_timeout
DATABASE_TIMEOUT = 8  # the apps': far enough above that which one bound a statement shows
REVIEW = {"film_id": 995, "rating": 4}
UNAVAILABLE = {"error": contract.DATABASE_UNAVAILABLE}


def execute(connection, *statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


@pytest.fixture(scope="module")
def operated(postgres):
    """postgres as an operator set it, for every session opened from now on."""
    admin = psycopg2.connect(postgres.url)
    admin.autocommit = True
    database = postgres.database
    execute(
        admin,
        f"ALTER DATABASE {database} SET default_transaction_isolation = 'serializable'",
        # The apps' role (db/roles.sql): the apps log in as it.
        f"ALTER ROLE {roles.APP} SET statement_timeout = '{OPERATOR_TIMEOUT}s'",
    )
    try:
        yield postgres
    finally:
        execute(
            admin,
            f"ALTER DATABASE {database} RESET default_transaction_isolation",
            f"ALTER ROLE {roles.APP} RESET statement_timeout",
        )
        admin.close()


@pytest.fixture(scope="module", params=APPS)
def operated_server(request, operated, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("logs")
    yield from serve(
        request.param, operated.url, log_dir, web_workers=2, database_timeout=DATABASE_TIMEOUT
    )


def keyed_post(port, key):
    return post(port, json.dumps(REVIEW).encode(), key=key)


def plain_post(port):
    return post(port, json.dumps(REVIEW).encode())


def stored(connection):
    """{review_id: (film_id, rating, idempotency_key)} of every stored review."""
    rows = query(connection, "SELECT review_id, film_id, rating, idempotency_key FROM review")
    return {review_id: tuple(rest) for review_id, *rest in rows}


# The GET routes, each a request for one statement: SELECT_FILM, SELECT_FILMS,
# SELECT_ONE, SELECT_FILM_RATINGS (film.title and the reviews' aggregates; no
# rating source is configured, so the route asks nothing else).
READS = {
    "film": "/films/995/",
    "films": "/films/?year.gt=2005",
    "health": "/health",
    "ratings": "/films/995/ratings/",
}


def reads(port, round_, order=tuple(READS)):
    """A request for each statement of the GET routes, in order. -> [(what, Response)]."""
    return [(what, get(port, READS[what])) for what in order]


def ratings_first(port, round_):
    return reads(port, round_, ("ratings", "film", "films", "health"))


def writes(port, round_):
    """A request for each statement of the POST: INSERT_REVIEW,
    INSERT_KEYED_REVIEW, and SELECT_KEYED_REVIEW (a replay)."""
    key = f"schema-{round_}"
    return [
        ("review", plain_post(port)),
        ("keyed review", keyed_post(port, key)),
        ("replay", keyed_post(port, key)),
    ]


def check_answers(answers, film, connection):
    """Each answer the contract's, and each 201 a stored review."""
    reviews = stored(connection)
    for what, response in answers:
        assert response is not None, what
        if what in READS:
            assert response.status == 200, (what, response.status, response.body[:200])
        else:
            assert response.status == 201, (what, response.status, response.body[:200])
            assert reviews[response.json()["review_id"]][:2] == (995, 4), what
    assert all(response.json() == film for what, response in answers if what == "film")
    for what, response in answers:
        if what == "ratings":  # the film as the film route answers it, its reviews counted
            ratings = response.json()
            assert {key: ratings[key] for key in film} == film
            assert 0 <= ratings["reviews"]["count"] <= len(reviews)


ROUNDS = 6  # requests per statement at each stage: both workers, several connections
# Each change, and what is sent first after it: a failed statement makes asyncpg
# drop every cached statement of its pool, so a read failing first would hide
# what a write would have met.
CHANGES = [
    ("ALTER TABLE review ALTER COLUMN review_id TYPE bigint", writes, reads),
    ("ALTER TABLE film ALTER COLUMN title TYPE text", reads, writes),
    # film.title again, met first by the ratings route's statement.
    ("ALTER TABLE film ALTER COLUMN title TYPE character varying(300)", ratings_first, writes),
]
UNDO = [
    "ALTER TABLE review ALTER COLUMN review_id TYPE integer",
    "ALTER TABLE film ALTER COLUMN title TYPE character varying(255)",
]


def test_a_column_type_changed_under_the_apps_is_answered_as_before(operated_server, private_db):
    """ALTER TABLE ... TYPE while the apps run, on a column in the answer of
    statements they prepared: asyncpg's cached statements are invalid ("cached
    plan must not change result type"); outside a transaction block it
    prepares each again, once, by itself. Every request answers as before."""
    port = port_of(operated_server)
    film = get(port, "/films/995/").json()
    for round_ in range(ROUNDS):
        check_answers(reads(port, round_) + writes(port, f"before-{round_}"), film, private_db)
    try:
        for stage, (change, first, then) in enumerate(CHANGES):
            execute(private_db, change)
            for round_ in range(ROUNDS):
                name = f"change-{stage}-{round_}"
                check_answers(first(port, name) + then(port, name), film, private_db)
    finally:
        execute(private_db, *UNDO)
    # Each round stored two reviews: one without a key, one with (and replayed).
    assert len(stored(private_db)) == 2 * ROUNDS * (1 + len(CHANGES))


# Reviews of other films, for VACUUM FULL to copy while it holds review.
OTHER_REVIEWS = """INSERT INTO review (film_id, rating)
                   SELECT 1 + n % 900, 1 + n % 5 FROM generate_series(1, 50000) AS n"""
VACUUMS = 3
# The slowest answer allowed: a statement waits for the lock at most the
# operator's timeout, and a request may queue behind others on a sync worker.
SLOWEST = 4 * OPERATOR_TIMEOUT + 5


def test_vacuum_full_under_reads_and_writes_is_waited_for_or_503(
    operated_server, private_db, record_property
):
    """VACUUM FULL review, three times, under clients that post reviews and
    read the ratings route (its film's reviews counted): while it copies the
    table it holds a lock that every statement on review waits for. Each
    answer is a 200 or 201, or the contract's 503 once the statement timeout
    has passed; none is a 500 or a hang; every review answered 201 is
    stored, and no other."""
    execute(private_db, OTHER_REVIEWS)
    port = port_of(operated_server)
    took = []
    with Load(port, clients=4, readers=4, read_path="/films/995/ratings/") as ledger:
        for _ in range(VACUUMS):
            time.sleep(0.5)
            started = time.monotonic()
            execute(private_db, "VACUUM FULL review")
            took.append(round(time.monotonic() - started, 2))
    record_property("vacuum_s", took)
    record_property("statuses", ledger.statuses)
    record_property("slowest_s", round(ledger.slowest, 2))
    assert ledger.statuses.get(200) and ledger.statuses.get(201), ledger.statuses
    assert set(ledger.statuses) <= {200, 201, 503}, ledger.statuses
    assert ledger.errors <= {(503, contract.DATABASE_UNAVAILABLE)}, ledger.errors
    assert ledger.unanswered == 0 and ledger.slowest < SLOWEST
    assert_ledger_holds(port, ledger, private_db)


AT_ONCE = 20


def test_concurrent_writes_with_one_key_store_one_review_whatever_the_default_isolation(
    operated_server, private_db
):
    """20 requests with one key at once, on a database whose default isolation
    is serializable: one stores the review, the others wait for it and answer
    it, 201 each (the app pins READ COMMITTED); one row."""
    for round_ in range(3):
        key = f"serializable-{round_}"
        barrier = threading.Barrier(AT_ONCE, timeout=20)

        def send(_, key=key, barrier=barrier):
            return raw_post(
                operated_server, f"Idempotency-Key: {key}\r\n", json.dumps(REVIEW), barrier
            )

        with ThreadPoolExecutor(AT_ONCE) as executor:
            answers = list(executor.map(send, range(AT_ONCE)))
        [(review_id,)] = query(
            private_db, "SELECT review_id FROM review WHERE idempotency_key = %s", key
        )
        assert answers == [(201, {"review_id": review_id, **REVIEW})] * AT_ONCE
    assert len(stored(private_db)) == 3


def test_an_operators_stricter_statement_timeout_bounds_the_apps_statements(
    operated_server, operated, private_db
):
    """statement_timeout set by ALTER ROLE below DATABASE_TIMEOUT: a statement
    that waits for a lock is cancelled at the operator's bound (503), where
    the app's own startup setting used to replace it."""
    locker = psycopg2.connect(operated.url)
    try:
        execute(locker, "LOCK TABLE film IN ACCESS EXCLUSIVE MODE")
        answer = get(port_of(operated_server), "/films/995/")
    finally:
        locker.close()
    assert (answer.status, answer.json()) == (503, UNAVAILABLE)
    assert answer.seconds < OPERATOR_TIMEOUT + 3 < DATABASE_TIMEOUT  # noise, not the apps' 8 s
    assert get(port_of(operated_server), "/films/995/").status == 200


def test_an_exhausted_sequence_answers_a_replay_and_refuses_a_new_review(
    operated_server, private_db
):
    """review_id's sequence at its maximum: a replay of a stored key needs no
    new id (201, the stored review); a new review cannot get one: 503, nothing
    stored, with a key or without."""
    port = port_of(operated_server)
    first = keyed_post(port, "before-the-end")
    assert first.status == 201
    execute(private_db, "SELECT setval('review_review_id_seq', 2147483647)")
    try:
        replay = keyed_post(port, "before-the-end")
        new_keyed, new_plain = keyed_post(port, "after-the-end"), plain_post(port)
    finally:
        execute(private_db, "SELECT setval('review_review_id_seq', max(review_id)) FROM review")
    assert (replay.status, replay.json()) == (201, first.json())
    assert (new_keyed.status, new_keyed.json()) == (503, UNAVAILABLE)
    assert (new_plain.status, new_plain.json()) == (503, UNAVAILABLE)
    assert list(stored(private_db)) == [first.json()["review_id"]]
    assert plain_post(port).status == 201  # ids to draw again
