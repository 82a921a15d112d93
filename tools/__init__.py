"""Scripts behind benchmark.sh and the tests: serving an app, measuring it."""

from infra import ROOT  # noqa: F401  (tools.ROOT: the project's folder, as infra has it)
