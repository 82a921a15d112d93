"""The knobs every app reads from the environment, with the same defaults."""

import os
import re
from dataclasses import dataclass
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
        URL holds it."""
        if not environ.get("DATABASE_URL"):
            raise RuntimeError("DATABASE_URL is not set")
        return cls(
            database_url=with_password(
                environ["DATABASE_URL"], environ.get("DATABASE_PASSWORD_FILE")
            ),
            pool_min_size=int(environ.get("POOL_MIN_SIZE", "0")),
            pool_max_size=int(environ.get("POOL_MAX_SIZE", "20")),
            pool_timeout=float(environ.get("POOL_TIMEOUT", "5")),
            database_timeout=float(environ.get("DATABASE_TIMEOUT", "5")),
            transaction_pooling=environ.get("TRANSACTION_POOLING", "0") == "1",
            upstream_fanout=base_urls(environ.get("UPSTREAM_FANOUT", "")),
            upstream_timeout=positive(environ.get("UPSTREAM_TIMEOUT", "1"), "UPSTREAM_TIMEOUT"),
            web_threads=whole(environ.get("WEB_THREADS", "16"), "WEB_THREADS"),
        )


def with_password(url, password_file):
    """url with the password read from password_file (none: url as it is)."""
    if not password_file:
        return url
    try:
        lines = open(password_file).read().splitlines()
    except OSError as error:
        raise RuntimeError(f"DATABASE_PASSWORD_FILE {password_file}: {error.strerror}") from None
    if not lines or not lines[0]:
        raise RuntimeError(f"DATABASE_PASSWORD_FILE {password_file} is empty")
    parts = urlsplit(url)
    if parts.password is not None:
        raise RuntimeError("DATABASE_URL holds a password and DATABASE_PASSWORD_FILE gives one")
    user, at, host = parts.netloc.rpartition("@")
    if not at:
        raise RuntimeError("DATABASE_URL names no user for DATABASE_PASSWORD_FILE's password")
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
            raise ValueError(f"UPSTREAM_FANOUT: not an http(s) base URL: {url!r}")
        if parts.query or parts.fragment or "?" in url or "#" in url:
            raise ValueError(f"UPSTREAM_FANOUT: a base URL has no query or fragment: {url!r}")
    if len(set(urls)) < len(urls):
        raise ValueError(f"UPSTREAM_FANOUT names a source twice: {text!r}")
    return urls


def positive(text, name):
    """A number of seconds above 0; ValueError naming the variable otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a number of seconds above 0: {text!r}")
    return value


def whole(text, name):
    """A whole number above 0; ValueError naming the variable otherwise."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name} must be a whole number above 0: {text!r}")
    return value
