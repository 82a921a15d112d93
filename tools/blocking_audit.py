"""Before and during a migration from Flask to Quart: the blocking calls each
view and hook makes, those of async views apart, for they stop the event loop.

    python -m tools.blocking_audit PATH    (a package folder or a .py file)
    python path/to/tools/blocking_audit.py PATH

Reads the code, never runs it. From each view and hook (tools/codebase.py:
`before_request`, error handlers, `user_loader`, ...) it follows the calls
into the package's functions and the decorators it wraps them in, and says
what each call is through its imports and attributes (tools/origins.py: a
client made in another module, a model's query); a call into the project's
other modules (`common/`) is one call, blocking if what it reaches blocks.
It prints one line per blocking call (tools/blocking_calls.py: the libraries
it knows), under the kind of view that makes it:

    file:line view -> [helper -> ...] call (kind)

An async view's are the trap: they stop the worker's event loop. A sync
view's are information: Quart runs it in a thread of the loop's executor
(WEB_THREADS threads in this project's steps), as Flask did in its own.
A call awaited, or entered by `async with` or `async for`, is not blocking;
nor is a function handed to a thread (asyncio.to_thread(time.sleep, 1)),
nor one defined in a view and not called. Exit status: 1 while an async
view or hook blocks (the CI gate), 0 when none does, 2 when PATH holds no
Python to read.
"""

import ast
import copy
import sys
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:  # run as a script: the project's folder on the path, for tools.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.blocking_calls import DRIVER_METHODS, EAGER, kind_of, known  # noqa: E402
from tools.codebase import Function, Index, nested, python_files, walk  # noqa: E402
from tools.entries import hooks, views  # noqa: E402
from tools.origins import Instance, Origins  # noqa: E402


@dataclass
class Finding:
    path: str
    line: int
    chain: list  # the view, then each function of the codebase called on the way
    call: str  # the call as written
    kind: str

    def __str__(self):
        return f"{self.path}:{self.line} {' -> '.join(self.chain)} -> {self.call} ({self.kind})"


@dataclass
class Entry:
    """A view or a hook, and the blocking calls it reaches."""

    function: Function
    role: str  # "view", or the hook's name
    findings: list = field(default_factory=list)

    @property
    def label(self):
        name = self.function.label
        return name if self.role == "view" else f"{name} [{self.role}]"

    @property
    def is_async(self):
        return isinstance(self.function.node, ast.AsyncFunctionDef)


def calls(function):
    """(call, awaited) of each call the function makes itself, in line order;
    awaited: await x(), async with x(), async for ... in x()."""
    body = function.node.body
    awaited = set()
    for node in walk(body):
        if isinstance(node, ast.Await):
            awaited.add(id(node.value))
        elif isinstance(node, ast.AsyncWith):
            awaited |= {id(item.context_expr) for item in node.items}
        elif isinstance(node, ast.AsyncFor):
            awaited.add(id(node.iter))
    found = [node for node in walk(body) if isinstance(node, ast.Call)]
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    return [(node, id(node) in awaited) for node in found]


def shown(node):
    """The callee as written, the arguments of the calls in it as `...`:
    `db.execute(...).fetchall`."""
    node = copy.deepcopy(node)
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and (call.args or call.keywords):
            call.args, call.keywords = [ast.Constant(...)], []
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


class Audit:
    def __init__(self, index):
        self.index, self.origins = index, Origins(index)
        self.summaries = {}  # a function outside the package: the kinds it reaches
        self.lazy = self.lazy_relationships()

    def entries(self):
        """Every view, then every hook, with what it reaches."""
        found = [Entry(view, "view") for view in views(self.index, self.origins)]
        found += [Entry(hook, role) for hook, role in hooks(self.index, self.origins)]
        for entry in found:
            entry.findings = self.reached(entry.function, [entry.label])
        return found

    def reached(self, function, chain, seen=None):
        """The blocking calls function makes, itself or through the package's
        functions it calls and the decorators around them, in the order they
        run (each function once per entry)."""
        seen = seen if seen is not None else {function}
        found = []
        for decorator, wrapper in self.wrappers(function):
            if wrapper not in seen:
                seen.add(wrapper)
                found += self.reached(wrapper, [*chain, f"@{decorator.label}"], seen)
        for node, kind, target in self.blocking(function):
            if kind:
                path = str(function.module.path)
                found.append(Finding(path, node.lineno, chain, shown(node), kind))
            elif target not in seen:
                seen.add(target)
                found += self.reached(target, [*chain, target.label], seen)
        return found

    def blocking(self, function):
        """(node, kind, None) of each blocking call or load in function, and
        (node, None, function) of each of the package's functions it calls."""
        for call, awaited in calls(function):
            callee = self.origins.value(call.func, function)
            if isinstance(callee, Function) and callee.module in self.index.audited:
                yield call.func, None, callee
            elif isinstance(callee, Function):
                kinds = self.summary(callee)  # the project's, outside the package
                if kinds:
                    yield call.func, ",".join(sorted(kinds)), None
            elif not awaited and (kind := self.blocks(call, callee, function)):
                yield call.func, kind, None
        for node in walk(function.node.body):
            if isinstance(node, ast.Attribute) and self.loads(node, function):
                yield node, "database", None

    def blocks(self, call, callee, function):
        """The kind of blocking call this is, or None."""
        if isinstance(callee, str) and (kind_of(callee) or known(callee)):
            return kind_of(callee)
        if callee is not None and not isinstance(callee, str):
            return None  # one of the codebase's classes or instances
        # Nothing says what the object is (a connection a pool lent, an object
        # of a module not found): a DB-API driver's method on it blocks.
        if getattr(call.func, "attr", None) not in DRIVER_METHODS:
            return None
        receiver = self.origins.value(call.func.value, function)
        return "database" if receiver is None or isinstance(receiver, str) else None

    def summary(self, function):
        """The kinds of blocking call a function outside the package reaches."""
        if function not in self.summaries:
            self.summaries[function] = set()  # a cycle adds nothing
            kinds = set()
            for _, kind, target in self.blocking(function):
                kinds |= {kind} if kind else self.summary(target)
            for _, wrapper in self.wrappers(function):
                kinds |= self.summary(wrapper)
            self.summaries[function] = kinds
        return self.summaries[function]

    def wrappers(self, function):
        """(decorator, function) of the functions defined in each of the
        codebase's decorators around function: what runs at each call."""
        for decorator in function.node.decorator_list:
            called = decorator.func if isinstance(decorator, ast.Call) else decorator
            maker = self.origins.function(called, function.module)
            for inner in nested(maker) if maker else []:
                yield maker, inner

    def lazy_relationships(self):
        """{name: the classes} of the package's SQLAlchemy relationships that
        load on first access (lazy= absent, "select", True or "dynamic")."""
        found = {}
        for module in self.index.audited:
            for cls in module.classes.values():
                for name, value in cls.attributes.items():
                    callee = isinstance(value, ast.Call) and self.origins.value(value.func, module)
                    lazy = [k.value for k in value.keywords if k.arg == "lazy"] if callee else []
                    eager = lazy and getattr(lazy[0], "value", None) in EAGER
                    if str(callee).endswith("relationship") and not eager:
                        found.setdefault(name, set()).add(cls)
        return found

    def loads(self, node, function):
        """Whether reading this attribute loads a lazy relationship: its
        object is a model, a row a query returned, the logged-in user, or unknown."""
        if node.attr not in self.lazy or not isinstance(node.ctx, ast.Load):
            return False
        owner = self.origins.value(node.value, function)
        if isinstance(owner, Instance):
            return owner.cls in self.lazy[node.attr]
        if isinstance(owner, str):
            row = kind_of(owner.removesuffix("()")) == "database"
            return row or owner == "flask_login.current_user"
        return owner is None


def audit(path):
    """The entries (views, hooks) of the codebase at path, with their findings."""
    path = Path(path)
    return Audit(Index(package(path), python_files(path))).entries()


def package(path):
    """The outermost package holding path (flask_app for flask_app/films.py,
    so that its imports name modules as the app does), else path itself."""
    root = path if path.is_dir() else path.parent / path.stem
    while (root.parent / "__init__.py").is_file():
        root = root.parent
    return root


SECTIONS = {
    True: "async views and hooks: each call stops the event loop (exit 1 while any is left)",
    False: "sync views and hooks: each waits in a thread (Flask's; Quart's executor, WEB_THREADS)",
}


def main(arguments):
    """Print the findings under the path given; the exit status (docstring)."""
    if len(arguments) != 1 or arguments[0].startswith("-"):
        asked = arguments in (["-h"], ["--help"])
        print(__doc__.strip(), file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    path = Path(arguments[0])
    if not python_files(path):
        print(f"no Python to read at {path}", file=sys.stderr)
        return 2
    entries = audit(path)
    counts = {}
    for is_async, title in SECTIONS.items():
        kind = [entry for entry in entries if entry.is_async == is_async]
        findings = [finding for entry in kind for finding in entry.findings]
        if findings:
            print(f"# {title}")
            print("".join(f"{finding}\n" for finding in findings), end="")
        blocking = sum(1 for entry in kind if entry.findings)
        counts[is_async] = f"{len(findings)} blocking calls in {blocking} of {len(kind)}"
    print(
        f"{counts[True]} async views and hooks, {counts[False]} sync ones, under {path}",
        file=sys.stderr,
    )
    return 1 if any(entry.findings for entry in entries if entry.is_async) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
