"""A Python codebase read, never run (an AST walk, standard library only):
its modules by dotted name, their imports, functions, classes and top-level
names. The audited package's modules are read first; the project's other
modules they import (a folder beside it, as `common/` beside `flask_app/`,
or one of PYTHONPATH) when asked for. tools/entries.py finds what runs for a
request in it, tools/origins.py what an expression is, and
tools/blocking_audit.py walks it."""

import ast
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

NESTED = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


@dataclass(eq=False)
class Function:
    name: str
    node: ast.AST
    module: "Module"
    owner: str | None = None  # the class it is a method of
    parent: "Function | None" = None  # the function it is defined in

    @property
    def label(self):
        return f"{self.owner}.{self.name}" if self.owner else self.name

    @cached_property
    def names(self):
        """{name: (expression, annotated)}: what the function binds a name to
        (x = ..., with ... as x; a parameter by its annotation), the first binding."""
        found = {}
        arguments = self.node.args
        for parameter in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            if parameter.annotation is not None:
                found[parameter.arg] = (parameter.annotation, True)
        for name, value in bindings(self.node.body).items():
            found.setdefault(name, (value, False))
        return found

    @cached_property
    def inner(self):
        """The functions defined in this one (not in those)."""
        body = self.node.body
        children = [child for node in walk(body) for child in ast.iter_child_nodes(node)]
        return [
            Function(child.name, child, self.module, parent=self)
            for child in [*body, *children]
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        ]


@dataclass(eq=False)
class Class:
    name: str
    node: ast.ClassDef
    module: "Module"
    methods: dict = field(default_factory=dict)

    @cached_property
    def attributes(self):
        """{name: expression} assigned in the class body."""
        return bindings(self.node.body)

    @cached_property
    def fields(self):
        """{name: (expression, method)} of `self.name = ...` in its methods,
        the first that is not None."""
        found = {}
        for method in self.methods.values():
            for node in walk(method.node.body):
                if isinstance(node, ast.Assign) and not is_none(node.value):
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and is_self(target.value):
                            found.setdefault(target.attr, (node.value, method))
        return found


class Module:
    """One file: its imports (local name -> dotted origin), functions (methods
    as Class.name), classes and top-level names."""

    def __init__(self, path, name, tree):
        self.path, self.name, self.node = path, name, tree
        self.module, self.parent, self.owner = self, None, None  # a scope, as a Function
        self.imports, self.functions, self.classes = {}, {}, {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imports[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom):
                origin = self.absolute(node)
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{origin}.{alias.name}"
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name] = Function(node.name, node, self)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = found = Class(node.name, node, self)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        found.methods[item.name] = Function(item.name, item, self, node.name)
                        self.functions[f"{node.name}.{item.name}"] = found.methods[item.name]
        self.names = {name: (value, False) for name, value in bindings(tree.body).items()}

    def absolute(self, node):
        """The dotted module an ImportFrom names, relative ones resolved."""
        if not node.level:
            return node.module or ""
        parts = self.name.split(".")
        package = parts[: len(parts) - node.level + (self.path.name == "__init__.py")]
        return ".".join(package + ([node.module] if node.module else []))

    def dotted(self, expression):
        """The full dotted name of a Name or attribute chain, through the
        imports ("sleep" -> "time.sleep"); None for anything else."""
        if isinstance(expression, ast.Name):
            return self.imports.get(expression.id, expression.id)
        if isinstance(expression, ast.Attribute):
            base = self.dotted(expression.value)
            return base and f"{base}.{expression.attr}"
        return None


def walk(nodes):
    """Every node under nodes, not entering the functions, lambdas and classes
    defined there (what they call is not called by defining them)."""
    todo = [node for node in nodes if not isinstance(node, NESTED)]
    while todo:
        node = todo.pop()
        yield node
        todo += [child for child in ast.iter_child_nodes(node) if not isinstance(child, NESTED)]


def bindings(statements):
    """{name: expression} the statements bind first (x = ..., x: T = ...,
    with ... as x), not looking into nested functions."""
    found = {}
    for node in sorted(walk(statements), key=lambda node: getattr(node, "lineno", 0)):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and not is_none(node.value):
                    found.setdefault(target.id, node.value)
        elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            found.setdefault(node.optional_vars.id, node.context_expr)
    return found


def is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


def is_self(node):
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


class Index:
    """The audited package's modules by dotted name, and the project's others
    read when one of them is asked for (those under base, the folder that
    holds the audited package)."""

    def __init__(self, root, files):
        self.base, self.modules = root.parent, {}
        for path in files:
            relative = path.relative_to(self.base).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            self.read(path, ".".join(parts))
        self.audited = set(self.modules.values()) - {None}

    def read(self, path, name):
        try:
            tree = ast.parse(path.read_text(), str(path))
        except (SyntaxError, UnicodeDecodeError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            tree = None
        self.modules[name] = tree and Module(path, name, tree)
        return self.modules[name]

    def module(self, name):
        """The codebase's module of that dotted name, or None: under base, or
        a folder of PYTHONPATH (where a project's own packages are)."""
        if not name:
            return None
        if name not in self.modules:
            folders = [self.base, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
            files = [
                file
                for folder in filter(None, folders)
                for module in [Path(folder).joinpath(*name.split("."))]
                for file in (module.with_suffix(".py"), module / "__init__.py")
            ]
            found = [file for file in files if file.is_file()]
            self.modules[name] = found and self.read(found[0], name) or None
        return self.modules[name]

    def functions(self):
        """Every function of the audited modules, nested ones too."""
        for module in self.audited:
            for function in module.functions.values():
                yield function
                yield from nested(function)

    def extensions(self, key):
        """[(expression, scope)] of every `....extensions[key] = expression`."""
        found = []
        for module in [module for module in self.modules.values() if module]:
            for scope in [module, *module.functions.values()]:
                for node in walk(scope.node.body):
                    if isinstance(node, ast.Assign) and is_extension(node.targets[0], key):
                        found.append((node.value, scope))
        return found


def is_extension(target, key):
    return (
        isinstance(target, ast.Subscript)
        and getattr(target.value, "attr", None) == "extensions"
        and isinstance(target.slice, ast.Constant)
        and target.slice.value == key
    )


def nested(function):
    """The functions defined in function, at any depth."""
    for inner in function.inner:
        yield inner
        yield from nested(inner)


def python_files(path):
    """The .py files at path (a file, or a folder's, hidden ones and caches left out)."""
    if path.is_file():
        return [path] if path.suffix == ".py" else []

    def skipped(file):
        parts = file.relative_to(path).parts
        return any(
            part.startswith(".") or part in ("__pycache__", "node_modules") for part in parts
        )

    return sorted(file for file in path.rglob("*.py") if not skipped(file))
