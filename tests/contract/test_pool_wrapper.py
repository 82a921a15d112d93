"""The PoolWrapper against a real Postgres."""

import threading
import time

import psycopg2
import pytest

from common.pool_wrapper import PoolWrapper
from tests.helpers import query

INSERT = "INSERT INTO review (film_id, rating) VALUES (995, 4)"


@pytest.fixture
def pool(database_url, db):
    pool = PoolWrapper(database_url, min_size=1, max_size=2, timeout=0.5).open()
    yield pool
    pool.close()


def backend_pid(pool):
    with pool.acquire() as connection, connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid() AS pid")
        return cursor.fetchone()["pid"]


def review_count(db):
    return query(db, "SELECT count(*) FROM review")[0][0]


def test_connections_stay_open_between_requests(pool):
    pids = {backend_pid(pool) for _ in range(20)}
    assert len(pids) == 1
    assert (pool.size, pool.idle) == (1, 1)


def test_rows_as_mappings(pool):
    with pool.acquire() as connection, connection.cursor() as cursor:
        cursor.execute("SELECT film_id, title FROM film WHERE film_id = 995")
        assert cursor.fetchone()["film_id"] == 995


def test_each_statement_commits_itself(pool, db):
    """Autocommit, as asyncpg: a read is one round trip, no BEGIN or COMMIT."""
    with pool.acquire() as connection, connection.cursor() as cursor:
        cursor.execute(INSERT)
        assert review_count(db) == 1  # before the block ends
        cursor.execute("SELECT now() = statement_timestamp() AS alone")
        assert cursor.fetchone()["alone"]  # no transaction around the statement


def test_a_transaction_commits_what_its_block_wrote(pool, db):
    with pool.acquire() as connection, connection.transaction(), connection.cursor() as cursor:
        cursor.execute(INSERT)
        cursor.execute(INSERT)
        assert review_count(db) == 0  # not before the COMMIT
    assert review_count(db) == 2


def test_a_transaction_rolls_back_when_its_block_raises(pool, db):
    with pytest.raises(RuntimeError):
        with pool.acquire() as connection, connection.transaction():
            with connection.cursor() as cursor:
                cursor.execute(INSERT)
            raise RuntimeError("the view failed after writing")
    assert review_count(db) == 0
    assert (pool.size, pool.idle) == (1, 1)  # returned, not lost


def test_failed_transaction_is_rolled_back_before_reuse(pool, db):
    with pytest.raises(psycopg2.errors.CheckViolation):
        with pool.acquire() as connection, connection.transaction():
            with connection.cursor() as cursor:
                cursor.execute(INSERT)
                cursor.execute("INSERT INTO review (film_id, rating) VALUES (995, 9)")
    with pool.acquire() as connection, connection.cursor() as cursor:
        cursor.execute(INSERT)  # would fail in an aborted transaction
    assert review_count(db) == 1


def test_connection_closed_while_idle_is_replaced(pool, db):
    closed = backend_pid(pool)
    query(db, "SELECT pg_terminate_backend(%s)", closed)
    time.sleep(0.1)  # the server's goodbye reaches the socket
    assert backend_pid(pool) != closed  # no error: a new connection
    assert pool.size == 1


def test_connection_broken_in_use_is_discarded(pool):
    broken = backend_pid(pool)
    with pytest.raises(psycopg2.OperationalError):
        with pool.acquire() as connection, connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
    assert pool.size == 0
    assert backend_pid(pool) != broken


def test_waits_for_a_free_connection(pool):
    acquired = threading.Event()

    def hold():
        with pool.acquire():
            acquired.set()
            time.sleep(0.2)

    holders = [threading.Thread(target=hold) for _ in range(2)]
    for holder in holders:
        holder.start()
    acquired.wait()
    started = time.monotonic()
    backend_pid(pool)  # both connections are in use: this waits for one
    assert time.monotonic() - started < 0.5
    for holder in holders:
        holder.join()
    assert pool.size == 2


def test_times_out_when_exhausted(pool):
    with pool.acquire(), pool.acquire():
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            backend_pid(pool)
        assert 0.4 < time.monotonic() - started < 2
    assert (pool.size, pool.idle) == (2, 2)


def test_safe_under_threads(database_url, db):
    pool = PoolWrapper(database_url, min_size=0, max_size=4, timeout=10).open()
    errors = []

    def work():
        try:
            for _ in range(25):
                with pool.acquire() as connection, connection.cursor() as cursor:
                    cursor.execute(INSERT)
                    assert pool.size <= 4
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert review_count(db) == 200
    assert pool.size <= 4 and pool.idle == pool.size
    pool.close()
    assert pool.size == 0


def test_a_bad_dsn_fails_at_open():
    with pytest.raises(psycopg2.OperationalError):
        PoolWrapper("postgresql://nobody@127.0.0.1:1/none", min_size=1).open()


def test_connection_returned_after_close_is_closed(pool):
    with pool.acquire() as connection:
        pool.close()
    assert connection.closed
    assert pool.size == 0


def init_running(sql, given):
    """A pool's init that keeps each connection it is given, then runs sql on it."""

    def init(connection):
        given.append(connection)
        with connection.cursor() as cursor:
            cursor.execute(sql)

    return init


def test_init_runs_once_per_connection_before_its_first_use(database_url, db):
    given = []
    init = init_running("SET application_name = 'initialised'", given)
    pool = PoolWrapper(database_url, min_size=0, max_size=2, init=init).open()
    try:
        for _ in range(5):
            with pool.acquire() as connection, connection.cursor() as cursor:
                cursor.execute("SELECT current_setting('application_name') AS name")
                assert cursor.fetchone()["name"] == "initialised"
        assert given == [connection]
    finally:
        pool.close()


def test_a_connection_whose_init_failed_is_closed_and_not_counted(database_url, db):
    given = []
    init = init_running("SELECT 1 / 0", given)
    pool = PoolWrapper(database_url, min_size=0, max_size=1, timeout=0.5, init=init).open()
    for _ in range(2):  # the second would wait for a lost slot: TimeoutError
        with pytest.raises(psycopg2.errors.DivisionByZero):
            with pool.acquire():
                pass
    assert (pool.size, pool.idle) == (0, 0)
    assert len(given) == 2 and all(connection.closed for connection in given)
    pool.close()
