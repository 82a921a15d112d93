"""The database's roles (db/roles.sql): who owns the schema, what the apps and
the benchmark may do, and the URLs they log in with.

    python -m db.roles            # prints db/roles.sql, for psql or a DBA

db/load.py applies roles.sql whenever the role it loads as may create roles
(a superuser: the embedded Postgres, the tests' own servers). The embedded
Postgres trusts its loopback clients, so that a URL of it logs in as any role
by its name alone: login_url() swaps the user.
"""

import sys
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

SQL = Path(__file__).with_name("roles.sql")
OWNER, APP, BENCH = "films_owner", "films_app", "films_bench"
# PgBouncer's own login: it looks up films_app's verifier (auth_query), nothing else.
PGBOUNCER = "pgbouncer_auth"
# The embedded Postgres' superuser (db/embedded.py), the user of its URLs.
SUPERUSER = "postgres"
# Whether the connected role may create the roles (and so apply roles.sql).
CAN_CREATE_ROLES = "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user"


def apply(cursor):
    """roles.sql on cursor's connection, if its role may create roles; whether
    it ran. A DBA's owner role without CREATEROLE leaves the roles to the DBA."""
    cursor.execute(CAN_CREATE_ROLES)
    if not cursor.fetchone()[0]:
        return False
    cursor.execute(SQL.read_text())
    return True


def login_url(url, role):
    """url logging in as role, no password: for a server that trusts its
    client (the embedded one). Every other part of url is kept."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(role, safe='')}@{host}"))


def trusted(url):
    """Whether url is one the embedded Postgres hands out (db/embedded.py: its
    superuser, on the loopback, no password) or one of its roles': the
    harness's own database, whose apps and benchmark then log in as their
    own roles."""
    parts = urlsplit(url)
    return (
        unquote(parts.username or "") in (SUPERUSER, OWNER, APP, BENCH)
        and parts.password is None
        and parts.hostname in ("127.0.0.1", "localhost")
    )


def app_url(url):
    """The URL an app gets: films_app's for the embedded Postgres, url as it is
    otherwise (a database of yours: its role is yours to choose, docs/deploy.md)."""
    return login_url(url, APP) if trusted(url) else url


def bench_url(url):
    """The benchmark's own connection: films_bench's for the embedded Postgres."""
    return login_url(url, BENCH) if trusted(url) else url


if __name__ == "__main__":
    sys.stdout.write(SQL.read_text())
