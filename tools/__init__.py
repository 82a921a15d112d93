"""Scripts behind benchmark.sh and the tests: serving an app, measuring it."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the project's folder, for every module
