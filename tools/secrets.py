"""The stack's secrets, generated on this machine, never committed:

    python3 -m tools.secrets [--dir DIR]

writes into DIR (default: .secrets/ in the project's folder, git-ignored)
each secret that is not there yet, as a file holding one random line, and
says where in one line. The folder is of mode 700: no other user of this
machine reaches a file in it. The files are of mode 644, not 600: Compose
bind-mounts a secret file as it is, owner and mode (it ignores a secret's
uid, gid and mode outside Swarm), and each service's user (postgres 999, the
apps' 10001) must read its own; a container sees only the secrets its
service names. Swarm copies them with the uid, gid and mode 0400 that
compose.yaml gives. A secret already there
is kept: run it before every `docker compose up` or `docker stack deploy`
(compose.yaml refuses to start without them: "secret file ... does not
exist"). To change one, remove its file, run this again, and recreate the
stack's volume or ALTER ROLE ... PASSWORD (docs/deploy.md).

    postgres_password          Postgres' superuser (postgres), used by no app
    owner_password             films_owner, the schema's owner (migrations)
    app_password               films_app, the apps' role (db/roles.sql)
    bench_password             films_bench, the benchmark's role
    pgbouncer_auth_password    pgbouncer_auth, PgBouncer's own role: it looks
                               up films_app's verifier (auth_query)
    pgbouncer_admin_password   PgBouncer's admin console (pgbouncer_admin)
    pgbouncer_stats_password   PgBouncer's read-only console (pgbouncer_stats)
    write_token                the bearer token for writes, checked at the
                               proxy when the stack turns it on
"""

import os
import secrets
import sys
from pathlib import Path

from tools import ROOT
from tools.command import Parser

FOLDER = ROOT / ".secrets"
NAMES = (
    "postgres_password",
    "owner_password",
    "app_password",
    "bench_password",
    "pgbouncer_auth_password",
    "pgbouncer_admin_password",
    "pgbouncer_stats_password",
    "write_token",
)
BYTES = 32  # of randomness per secret: 43 URL-safe characters
FOLDER_MODE, FILE_MODE = 0o700, 0o644


def generate(folder=FOLDER):
    """The names of the secrets written into folder now (the others were there)."""
    folder = Path(folder)
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    folder.chmod(FOLDER_MODE)
    written = []
    for name in NAMES:
        path = folder / name
        try:
            # O_EXCL: never replaces one, even one written meanwhile.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(BYTES) + "\n")
        path.chmod(FILE_MODE)  # written first, readable after (the folder guards it)
        written.append(name)
    return written


def read(name, folder=FOLDER):
    """One secret's value (its file's first line)."""
    return (Path(folder) / name).read_text().splitlines()[0]


def main(argv=None):
    parser = Parser(prog="python3 -m tools.secrets", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=FOLDER, help="where (default .secrets/)")
    args = parser.parse_args(argv)
    try:
        written = generate(args.dir)
    except OSError as error:
        sys.exit(f"cannot write the secrets into {args.dir}: {error.strerror}")
    where = os.path.relpath(args.dir) if args.dir.is_relative_to(Path.cwd()) else args.dir
    kept = len(NAMES) - len(written)
    print(f"secrets in {where}/ (a folder of mode 700): {len(written)} generated, {kept} kept")


if __name__ == "__main__":
    main()
