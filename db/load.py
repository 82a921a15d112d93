"""Load the schema and the sample data into the database named by DATABASE_URL.

    DATABASE_URL=postgresql://... python -m db.load

Then the roles (db/roles.sql: films_owner owns the schema, films_app and
films_bench get what the apps and the benchmark need), when the role loading
may create roles. A role that may not create in the schema (an app's, the
benchmark's, given by --database-url) loads nothing: the schema must be there,
loaded by its owner (docs/deploy.md), else load() says so.

Safe to run twice: the schema uses IF NOT EXISTS and the data ON CONFLICT DO
NOTHING, so a second run neither fails nor duplicates. Safe to run at the same
time (apps started together on an empty database): IF NOT EXISTS does not stop
two concurrent CREATEs from colliding (a unique_violation on the catalog), so
each load holds an advisory lock until it commits, and the next one finds
everything there.
"""

import os
import sys
from pathlib import Path

import psycopg2

from db import roles

SQL_FILES = sorted(Path(__file__).parent.glob("[0-9][0-9]-*.sql"))
LOCK_KEY = 0x66696C6D  # "film": any constant that nothing else locks


# Whether the role may create in the schema, and whether the last part of the
# schema to come (the idempotency key) is there.
CAN_CREATE = "SELECT has_schema_privilege('public', 'CREATE')"
LOADED = """SELECT count(*) = 1 FROM information_schema.columns
             WHERE table_schema = 'public' AND table_name = 'review'
               AND column_name = 'idempotency_key'"""


class SchemaMissing(RuntimeError):
    """The schema is not there and this role may not load it."""


def load(database_url):
    connection = psycopg2.connect(database_url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            if not scalar(cursor, CAN_CREATE):
                if not scalar(cursor, LOADED):
                    raise SchemaMissing(
                        "the schema is not loaded, and this role may not load it: run "
                        "`python -m db.load` as the schema's owner (docs/deploy.md)"
                    )
                return
            for path in SQL_FILES:
                cursor.execute(path.read_text())
            roles.apply(cursor)
    finally:
        connection.close()


def scalar(cursor, sql):
    cursor.execute(sql)
    return cursor.fetchone()[0]


if __name__ == "__main__":
    if "DATABASE_URL" not in os.environ:
        sys.exit("DATABASE_URL is not set")
    load(os.environ["DATABASE_URL"])
