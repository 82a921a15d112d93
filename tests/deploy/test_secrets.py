"""The stack's secrets (tools/secrets.py) and how the apps read theirs
(DATABASE_PASSWORD_FILE, common/settings.py): generated once, in a folder of
mode 700 (the files 644, for Compose's bind mounts: tools/secrets.py says
why), never replaced; a password from a file, never from the
environment or a committed file."""

import shutil
import stat
import subprocess
import sys

import psycopg2
import pytest

from common.settings import Settings
from db import roles
from tests.helpers import query
from tools import ROOT
from tools import secrets as stack_secrets


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_every_secret_is_generated_once_private_and_random(tmp_path):
    folder = tmp_path / "secrets"
    assert stack_secrets.generate(folder) == list(stack_secrets.NAMES)
    assert mode(folder) == 0o700  # no other user of the machine gets in
    values = {name: stack_secrets.read(name, folder) for name in stack_secrets.NAMES}
    for name in stack_secrets.NAMES:
        assert mode(folder / name) == 0o644, name
        assert len(values[name]) >= 40 and values[name] != "postgres", name
    assert len(set(values.values())) == len(values)
    (folder / "app_password").unlink()
    assert stack_secrets.generate(folder) == ["app_password"]  # the others kept
    kept = {name: stack_secrets.read(name, folder) for name in stack_secrets.NAMES}
    assert {k: v for k, v in kept.items() if k != "app_password"} == {
        k: v for k, v in values.items() if k != "app_password"
    }


def test_the_command_says_where_in_one_line_and_refuses_a_bad_option(tmp_path):
    command = [sys.executable, "-m", "tools.secrets", "--dir", str(tmp_path / "s")]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    assert first.stdout.count("\n") == 1 and "8 generated, 0 kept" in first.stdout
    second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    assert "0 generated, 8 kept" in second.stdout
    bad = subprocess.run([*command, "--nope"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_the_secrets_folder_is_ignored_by_git():
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".secrets/app_password"], cwd=ROOT, check=False
    )
    assert ignored.returncode == 0


def test_the_apps_read_their_password_from_a_file(tmp_path):
    password = tmp_path / "app_password"
    password.write_text("p@ss:w/rd\n")
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://films_app@pgbouncer:6432/dvdrental",
            "DATABASE_PASSWORD_FILE": str(password),
        }
    )
    assert (
        settings.database_url == "postgresql://films_app:p%40ss%3Aw%2Frd@pgbouncer:6432/dvdrental"
    )


@pytest.mark.parametrize(
    ("url", "content", "refusal"),
    [
        ("postgresql://films_app@db/x", None, "No such file"),
        ("postgresql://films_app@db/x", "", "is empty"),
        ("postgresql://films_app:inline@db/x", "secret", "holds a password"),
        ("postgresql://db/x", "secret", "names no user"),
    ],
)
def test_a_password_file_that_cannot_serve_is_refused(tmp_path, url, content, refusal):
    path = tmp_path / "password"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=refusal):
        Settings.from_env({"DATABASE_URL": url, "DATABASE_PASSWORD_FILE": str(path)})


def test_a_password_read_from_a_file_logs_in(database_url, tmp_path):
    """A role with a password, over TCP with the password from the file (the
    embedded server trusts its loopback clients: the password is checked
    only as far as libpq sends it)."""
    if not roles.trusted(database_url):
        pytest.skip("TEST_DATABASE_URL is not the embedded Postgres")
    path = tmp_path / "password"
    path.write_text("from-the-file\n")
    env = {"DATABASE_URL": roles.app_url(database_url), "DATABASE_PASSWORD_FILE": str(path)}
    connection = psycopg2.connect(Settings.from_env(env).database_url)
    try:
        assert query(connection, "SELECT current_user") == [(roles.APP,)]
    finally:
        connection.close()


def test_the_secrets_command_is_one_and_needs_no_venv(tmp_path):
    """The README, docs/docker.md and docs/deploy.md give one command for
    the secrets, `python3 -m tools.secrets`, and it runs on a fresh clone:
    the system's Python 3 alone, no .venv."""
    for doc in ("README.md", "docs/docker.md", "docs/deploy.md"):
        text = (ROOT / doc).read_text()
        assert "python3 -m tools.secrets" in text, doc
        assert ".venv/bin/python -m tools.secrets" not in text, doc
        assert "python -m tools.secrets" not in text, doc
    python = shutil.which("python3", path="/usr/bin:/bin") or pytest.skip("no system python3")
    completed = subprocess.run(
        [python, "-s", "-E", "-m", "tools.secrets", "--dir", str(tmp_path / "s")],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == sorted(stack_secrets.NAMES)
