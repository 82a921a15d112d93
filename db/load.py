"""Load the schema and the sample data into the database named by DATABASE_URL.

    DATABASE_URL=postgresql://... python -m db.load

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

SQL_FILES = sorted(Path(__file__).parent.glob("[0-9][0-9]-*.sql"))
LOCK_KEY = 0x66696C6D  # "film": any constant that nothing else locks


def load(database_url):
    connection = psycopg2.connect(database_url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            for path in SQL_FILES:
                cursor.execute(path.read_text())
    finally:
        connection.close()


if __name__ == "__main__":
    if "DATABASE_URL" not in os.environ:
        sys.exit("DATABASE_URL is not set")
    load(os.environ["DATABASE_URL"])
