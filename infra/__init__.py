"""The lowest floor: what the apps' harness, the tools, the database scripts
and the tests all stand on, and which stands on nothing of theirs: the
project's folder and the app registry (infra/apps.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the project's folder, for every module
