"""The parsers of ./benchmark.sh's options that name a place (bench/arguments.py):
the database's URL, the --target's, the write-token file and the results
folder; each returns the value, or raises argparse.ArgumentTypeError with
what is wrong in one sentence, never echoing what may hold a secret."""

import os
import tempfile
from urllib.parse import urlsplit

import psycopg2.extensions

from bench import write_token
from bench.parsers import Refused
from infra import ROOT


def database_url(text):
    """A postgresql:// URL that libpq (psycopg2, pgbench) and asyncpg both read.
    The value is never echoed: it may hold a password."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError if out of range)
        psycopg2.extensions.parse_dsn(text)
        usable = parts.scheme in ("postgresql", "postgres")
    except (ValueError, psycopg2.Error):
        usable = False
    if not usable:
        raise Refused(
            "not a postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE URL (nor is "
            "DATABASE_URL, if that is where it came from); not shown: it may hold a password"
        )
    return text


def write_token_file(text):
    """--write-token-file: a file holding the door's write token, checked
    here (bench/write_token.py); the token is never shown."""
    try:
        write_token.read(text)
    except write_token.BadToken as error:
        raise Refused(f"{error} (nor is WRITE_TOKEN_FILE, if that is where it came from)") from None
    return os.path.abspath(text)


def target_url(text):
    """--target: http(s)://HOST[:PORT][/PREFIX], what wrk and the routes' paths
    are appended to."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError if out of range)
    except ValueError:
        parts = None
    plain = text.isprintable() and not any(char.isspace() for char in text)
    if (
        not plain  # urlsplit drops tabs and newlines; wrk would not
        or parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
    ):
        raise Refused(f"not an http://HOST[:PORT] URL: {text!r}")
    return text


def results_folder(text):
    """--results: a folder this process can make its runs' folders in, once
    the run starts (relative to the project's folder). Nothing is made here."""
    try:
        reason = folder_problem(ROOT / text) if text and "\0" not in text else "no folder named"
    except (OSError, ValueError) as error:  # ValueError: a name the OS cannot encode
        reason = getattr(error, "strerror", None) or str(error)
    if reason:
        raise Refused(f"cannot hold the results in {text!r}: {reason}")
    return text


def folder_problem(path):
    """Why no folder can be made at path, or None. A folder is made and removed
    in its nearest existing parent: only trying says (/proc, a read-only disk)."""
    if len(os.fsencode(path)) > os.pathconf(ROOT, "PC_PATH_MAX") // 2:
        return "too long a path"  # the run's own names go below it
    parent = path
    while not parent.exists():
        if len(os.fsencode(parent.name)) > os.pathconf(ROOT, "PC_NAME_MAX"):
            return "too long a name"
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a folder"
    try:
        os.rmdir(tempfile.mkdtemp(dir=parent))
    except OSError as error:
        return f"no folder can be made in {parent}: {error.strerror}"
    return None
