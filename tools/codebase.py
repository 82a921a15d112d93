"""A Python codebase read, never run (an AST walk, standard library only):
its modules by dotted name, their imports, functions and classes, the
functions a call runs, and its views: functions under a route decorator
(`@app.route`, `@bp.get`, ...), given to `add_url_rule(view_func=...)`, a
MethodView's get/post/..., or a Falcon responder (`on_get`, ...).
tools/blocking_audit.py walks it from the views."""

import ast
import sys
from dataclasses import dataclass

ROUTE_DECORATORS = {"route", "get", "post", "put", "patch", "delete", "websocket"}
VIEW_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "dispatch_request"}
RESPONDERS = {f"on_{verb}" for verb in VIEW_METHODS - {"dispatch_request"}}


@dataclass(eq=False)
class Function:
    name: str
    node: ast.AST
    module: "Module"
    owner: str | None = None  # the class it is a method of

    @property
    def label(self):
        return f"{self.owner}.{self.name}" if self.owner else self.name


class Module:
    """One file: its functions (methods as Class.name), its imports (local
    name -> dotted origin) and its classes' bases."""

    def __init__(self, path, name, tree):
        self.path, self.name, self.tree = path, name, tree
        self.imports, self.functions, self.bases = {}, {}, {}
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
                self.bases[node.name] = [self.dotted(base) or "" for base in node.bases]
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        method = Function(item.name, item, self, node.name)
                        self.functions[f"{node.name}.{item.name}"] = method

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
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
    todo = [node for node in nodes if not isinstance(node, nested)]
    while todo:
        node = todo.pop()
        yield node
        todo += [child for child in ast.iter_child_nodes(node) if not isinstance(child, nested)]


class Index:
    """Every module under the audited path, by dotted name."""

    def __init__(self, root, files):
        self.modules = {}
        for path in files:
            relative = path.relative_to(root.parent).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            try:
                tree = ast.parse(path.read_text(), str(path))
            except (SyntaxError, UnicodeDecodeError) as error:
                print(f"skipped {path}: {error}", file=sys.stderr)
                continue
            self.modules[".".join(parts)] = Module(path, ".".join(parts), tree)

    def lookup(self, dotted):
        """The codebase's function a dotted name means (module.function), as a list."""
        if not dotted or "." not in dotted:
            return []
        module, name = dotted.rsplit(".", 1)
        found = self.modules.get(module) and self.modules[module].functions.get(name)
        return [found] if found else []

    def resolve(self, module, expression):
        """The codebase's function an expression of module names (one of the
        module's, or one it imports, or module.function), as a list."""
        if isinstance(expression, ast.Name) and expression.id in module.functions:
            return [module.functions[expression.id]]
        return self.lookup(module.dotted(expression))

    def targets(self, call, function):
        """The codebase's functions a call of function runs: one resolve()
        finds, or a method of the same class through self."""
        func = call.func
        through_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        if through_self and func.value.id in ("self", "cls") and function.owner:
            method = function.module.functions.get(f"{function.owner}.{func.attr}")
            return [method] if method else []
        return self.resolve(function.module, func)

    def registered(self):
        """The functions given to add_url_rule(view_func=...), wherever defined."""
        found = set()
        for module in self.modules.values():
            for node in ast.walk(module.tree):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "attr", None) == "add_url_rule"
                ):
                    views = [
                        keyword.value for keyword in node.keywords if keyword.arg == "view_func"
                    ]
                    found.update(f for view in views for f in self.resolve(module, view))
        return found

    def views(self):
        """Every view of the codebase, in file and line order."""
        registered = self.registered()
        found = [
            function
            for module in self.modules.values()
            for function in module.functions.values()
            if function in registered or is_view(function)
        ]
        return sorted(found, key=lambda f: (str(f.module.path), f.node.lineno))


def is_view(function):
    """Whether a function is a view by its own definition: routed by a
    decorator, a MethodView's method or a Falcon responder."""
    node, owner = function.node, function.owner
    if owner is None:
        return any(
            isinstance(d, ast.Call) and getattr(d.func, "attr", None) in ROUTE_DECORATORS
            for d in node.decorator_list
        )
    if function.name in RESPONDERS:
        return True
    bases = function.module.bases.get(owner, [])
    return function.name in VIEW_METHODS and any(base.endswith("View") for base in bases)


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
