"""Dependencies point down: a module imports only modules on its own floor or
below (docs/architecture.md, "The floors"). Read from the code's imports,
nothing run."""

import ast

import pytest

from infra import ROOT

# Lowest first. A module belongs to the first prefix that names it.
FLOORS = [
    ["common"],
    ["infra"],
    ["db"],
    ["tools"],
    ["upstream"],
    [
        "bench.errors",
        "bench.progress",
        "bench.records",
        "bench.routes",
        "bench.options",
        "bench.folder",
        "bench.intervals",
        "bench.write_token",
        "bench.layers",
    ],
    ["bench.sut"],
    ["bench.load"],
    ["bench.report"],
    ["bench.rotation", "bench.parsers", "bench.addresses"],
    ["bench.modes"],
    ["bench.plan", "bench.compare", "bench.refusals", "bench.arguments"],
    ["bench.run", "bench.redraw", "bench.cli", "bench.__main__", "bench"],
]
PACKAGES = ("common", "infra", "db", "tools", "upstream", "bench")


def floor(module):
    for number, prefixes in enumerate(FLOORS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return number
    raise LookupError(f"{module} is on no floor: add it to FLOORS")


def module_of(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path):
    """The project's modules the file imports, at any depth of the file."""
    module = module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            names = [f"{base}.{alias.name}" for alias in node.names]  # a module, or in one
        else:
            continue
        yield from (name for name in names if name.split(".")[0] in PACKAGES)


SOURCES = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_module_imports_a_floor_above_its_own(path):
    mine = floor(module_of(path))
    above = [name for name in imported(path) if floor(name) > mine]
    assert above == [], f"{module_of(path)} (floor {mine}) imports {above}"


def test_the_floors_match_the_architecture_doc():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for package in ("bench/sut/", "bench/load/", "bench/report/", "bench/modes/", "infra/"):
        assert package in text
