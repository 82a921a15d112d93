"""The knobs every app reads from the environment, with the same defaults.

    python -m common.settings

reads them as the apps do and says nothing if they can serve; else one line
on stderr naming the variable, its value and the rule, and exit 2. Each
serve.sh runs it before its server starts: a server that fails in its
workers prints a traceback a worker at a time, each server its own way."""

import os
import re
import sys
from dataclasses import dataclass
from functools import partial
from urllib.parse import quote, urlsplit, urlunsplit

# UPSTREAM_FANOUT's separators: commas, spaces, newlines (a YAML block).
_LIST_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Settings:
    database_url: str
    # 0: connect on demand, so that an app (or a restarted worker) starts even
    # while the database is down, and /health can say so with a 503.
    pool_min_size: int
    pool_max_size: int
    pool_timeout: float  # seconds to wait for a free connection, then 503
    # Seconds Postgres may take to accept a connection, and to answer one
    # statement (a locked table, a frozen server): then 503, not a hang.
    database_timeout: float
    # DATABASE_URL is a pooler in transaction mode (PgBouncer, docs/deploy.md):
    # a server connection is this client's for one transaction only, so no
    # session state may outlive one, prepared statements included.
    transaction_pooling: bool
    # The rating sources GET /films/<id>/ratings/ asks (common/ratings.py):
    # base URLs, in the order the answer lists them; none by default.
    upstream_fanout: tuple = ()
    # Seconds the whole fan-out may take, every source together, then each
    # source that has not answered is null (docs/contract.md).
    upstream_timeout: float = 1.0
    # Seconds a request may wait to start its work (the server's queue, then
    # the pool's) before it is refused, 503 with Retry-After
    # (common/admission.py); in the async apps a fifth of it is also the
    # event loop's lag past which their limit on the requests open falls.
    # 0: never refused, only POOL_TIMEOUT bounds it.
    queue_budget: float = 0.05
    # Threads per worker process that run sync code: Flask's and Falcon's
    # (their serve.sh hands WEB_THREADS to gunicorn's gthread, the same 16 by
    # default), and the executor the migration's steps 1 and 2 run their sync
    # views in (docs/migration.md), sized alike.
    web_threads: int = 16

    @classmethod
    def from_env(cls, environ=os.environ):
        """Read the settings; DATABASE_URL is required, the rest have defaults.
        DATABASE_PASSWORD_FILE: a file (a Docker or Kubernetes secret) whose
        first line is the password, so that neither the environment nor the
        URL holds it.

        Raises ValueError, its message one line: the variable, its value
        (never DATABASE_URL's: it may hold a password) and the rule."""
        settings = cls(
            database_url=with_password(
                required(environ, "DATABASE_URL"), environ.get("DATABASE_PASSWORD_FILE")
            ),
            pool_min_size=read(environ, "POOL_MIN_SIZE", "0", count),
            pool_max_size=read(environ, "POOL_MAX_SIZE", "20", partial(count, least=1)),
            pool_timeout=read(environ, "POOL_TIMEOUT", "5", seconds),
            database_timeout=read(environ, "DATABASE_TIMEOUT", "5", seconds),
            transaction_pooling=read(environ, "TRANSACTION_POOLING", "0", flag),
            upstream_fanout=read(environ, "UPSTREAM_FANOUT", "", base_urls),
            upstream_timeout=read(environ, "UPSTREAM_TIMEOUT", "1", seconds),
            queue_budget=read(environ, "QUEUE_BUDGET", "0.05", budget),
            web_threads=read(environ, "WEB_THREADS", "16", partial(count, least=1)),
        )
        if settings.pool_min_size > settings.pool_max_size:
            least = environ["POOL_MIN_SIZE"]  # set: its default, 0, is never above
            raise ValueError(
                f"POOL_MIN_SIZE={least!r}: must be at most POOL_MAX_SIZE's {settings.pool_max_size}"
            )
        return settings


def read(environ, name, default, parse):
    """parse(the variable's text, default if unset); a ValueError of parse's
    (its rule) becomes one naming the variable and its value."""
    text = environ.get(name, default)
    try:
        return parse(text)
    except ValueError as error:
        raise ValueError(f"{name}={text!r}: {error}") from None


def required(environ, name):
    """The variable's text; its value is not named (DATABASE_URL's may hold a password)."""
    if not environ.get(name):
        raise ValueError(f"{name} is not set: it is required")
    return environ[name]


def count(text, least=0):
    """A whole number (ASCII digits alone), least or more."""
    if not (text.isascii() and text.isdigit()) or int(text) < least:
        raise ValueError(f"must be a whole number, {least} or more")
    return int(text)


def seconds(text):
    """A number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ValueError("must be a number of seconds above 0")
    return value


def budget(text):
    """A number of seconds, 0 (none) or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ValueError("must be a number of seconds, 0 (none) or more")
    return value


def flag(text):
    """1 (on) or 0 (off)."""
    if text not in ("0", "1"):
        raise ValueError("must be 1 (on) or 0 (off)")
    return text == "1"


def with_password(url, password_file):
    """url with the password read from password_file (none: url as it is)."""
    if not password_file:
        return url
    name = f"DATABASE_PASSWORD_FILE={password_file!r}"
    try:
        lines = open(password_file).read().splitlines()
    except OSError as error:
        raise ValueError(f"{name}: cannot be read: {error.strerror}") from None
    except UnicodeDecodeError:  # a ValueError, whose message names no variable
        raise ValueError(f"{name}: is not text") from None
    if not lines or not lines[0]:
        raise ValueError(f"{name}: is empty, where its first line is the password")
    parts = urlsplit(url)
    if parts.password is not None:
        raise ValueError(f"{name}: DATABASE_URL holds a password too: give one of them")
    user, at, host = parts.netloc.rpartition("@")
    if not at:
        raise ValueError(f"{name}: DATABASE_URL names no user for its password")
    netloc = f"{user}:{quote(lines[0], safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def base_urls(text):
    """UPSTREAM_FANOUT -> a tuple of base URLs, each without its trailing slash.

    Raises ValueError naming the first entry that is not http(s)://host[:port][/path]
    with neither query nor fragment, or one named twice."""
    urls = tuple(url.rstrip("/") for url in _LIST_SEPARATORS.split(text.strip()) if url)
    for url in urls:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises ValueError for a port out of range)
        except ValueError:
            parts = None
        if not parts or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {url!r}")
        if parts.query or parts.fragment or "?" in url or "#" in url:
            raise ValueError(f"a base URL has no query or fragment: {url!r}")
    if len(set(urls)) < len(urls):
        raise ValueError("names a source twice")
    return urls


def main():
    try:
        Settings.from_env()
    except ValueError as error:
        print(error, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
