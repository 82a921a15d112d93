"""The door's write token, as the harness sends it (proxy/door.conf: a POST
without "Authorization: Bearer <token>" is refused 401 where the stack has
a token). The run names its file once (--write-token-file, or
WRITE_TOKEN_FILE: bench/arguments.py); the token is read from that file
here, for verification and the open loop, and by lua/post.lua for wrk. The
file is passed, never the token: command lines and reports name the file.
"""

import re
from pathlib import Path

# proxy/write-token.sh's rule: what nginx takes in a quoted string unchanged.
TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{32,128}")


class BadToken(ValueError):
    """The file cannot be read, or does not hold a token the door would take."""


def read(path):
    """The token in path's first line. Raises BadToken (the token not shown)."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadToken(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
    if not lines or not TOKEN.fullmatch(lines[0].strip()):
        raise BadToken(f"{path} does not hold a token: 32 to 128 of A-Z a-z 0-9 . _ ~ + / = -")
    return lines[0].strip()


def headers(path):
    """The header a write carries: {} without a token file."""
    return {"Authorization": f"Bearer {read(path)}"} if path else {}
