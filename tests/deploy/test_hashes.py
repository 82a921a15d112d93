"""The images install their Python dependencies with pip --require-hashes:
requirements-hashed/ (python -m tools.hashes) holds every pin of each file
an image installs, in the same order, each with its sha256; the Dockerfile's
every venv.sh call requires them. Without the network: the pins are
compared, not the wheels (the generator downloads them)."""

import re

import pytest

from tests.docker_host import build_context_rules, left_out
from tools import ROOT, hashes


@pytest.mark.parametrize("name", hashes.IMAGE_FILES)
def test_the_hashed_file_holds_exactly_the_pins(name):
    assert hashes.pins(ROOT / "requirements-hashed" / name) == hashes.pins(ROOT / name)


@pytest.mark.parametrize("name", hashes.IMAGE_FILES)
def test_every_pin_has_its_hash(name):
    text = (ROOT / "requirements-hashed" / name).read_text()
    entries = re.split(r"\n(?=\S)", text.split("\n", 2)[2].strip())
    assert len(entries) == len(hashes.pins(ROOT / name))
    for entry in entries:
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), entry


def test_the_fan_out_clients_are_pinned_and_hashed():
    pinned = dict(hashes.pins(ROOT / "requirements-hashed" / "requirements.txt"))
    assert {"httpx", "aiohttp"} <= set(pinned)


def test_the_check_notices_a_pin_that_moved(tmp_path, monkeypatch):
    for name in hashes.IMAGE_FILES:
        (tmp_path / name).write_text((ROOT / "requirements-hashed" / name).read_text())
    monkeypatch.setattr(hashes, "FOLDER", tmp_path)
    assert hashes.stale() == []
    moved = (tmp_path / "requirements.txt").read_text().replace("httpx==", "httpx==0.0.0+")
    (tmp_path / "requirements.txt").write_text(moved)
    assert hashes.stale() == ["requirements.txt"]


def test_the_dockerfile_requires_the_hashes():
    """Every venv.sh call in the image requires hashes, over files that have
    them, and the hashed copies are in the build context."""
    text = (ROOT / "Dockerfile").read_text()
    calls = re.findall(r"^RUN (.*scripts/venv\.sh.*)$", text, re.MULTILINE)
    assert calls
    for call in calls:
        assert call.startswith("REQUIRE_HASHES=1 bash scripts/venv.sh"), call
        named = call.split("venv.sh", 1)[1].split() or ["requirements.txt"]
        assert set(named) <= set(hashes.IMAGE_FILES), call
    assert "COPY requirements-hashed/requirements.txt requirements-hashed/" in text
    rules = build_context_rules()  # .dockerignore, read as Docker reads it
    assert not any(left_out(f"requirements-hashed/{name}", rules) for name in hashes.IMAGE_FILES)
