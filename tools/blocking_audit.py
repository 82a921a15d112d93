"""Before migrating a Flask service to async: the blocking calls its views
make, each of which must become an await (or move to a thread) first.

    python -m tools.blocking_audit PATH    (a package folder or a .py file)

Reads the code, never runs it (tools/codebase.py: which functions are
views, and which functions a call runs). From each view it follows the calls
into the codebase's own functions, transitively, and prints one line per
blocking call it reaches:

    file:line view -> [helper -> ...] call (kind)

kind is database (psycopg2, psycopg, pymysql, sqlite3, redis, pymongo, and
the methods every driver has: acquire(), execute(), fetch...(), commit()),
http (requests, urllib, urllib3, httpx.Client, http.client; a client made
in the function, at the module's top, or handed in as a parameter annotated
with its type), sleep
(time.sleep), file (open(), Path.read_text(), shutil) or subprocess
(subprocess, os.system). A call awaited, or entered by `async with` or
`async for`, is not blocking; nor is a function handed to a thread
(asyncio.to_thread(time.sleep, 1) calls nothing itself), nor one defined
inside a view. Exit status: 1 when it found any (for CI), 0 when none, 2
when PATH holds no Python to read.
"""

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tools.codebase import Index, python_files, walk


def kinds(kind, *names):
    """{name: kind} for each of the space-separated names."""
    return dict.fromkeys(" ".join(names).split(), kind)


HTTP_VERBS = "get post put patch delete head options request stream".split()
# Functions that block, by their full dotted name.
BLOCKING = {
    **kinds("sleep", "time.sleep"),
    **kinds("file", "open io.open shutil.copy shutil.copy2 shutil.copyfile shutil.copytree"),
    **kinds("http", "urllib.request.urlopen urllib.request.urlretrieve"),
    **kinds(
        "http", *(f"{client}.{verb}" for client in ("requests", "httpx") for verb in HTTP_VERBS)
    ),
    **kinds("subprocess", "os.system os.popen subprocess.run subprocess.call subprocess.Popen"),
    **kinds("subprocess", "subprocess.check_call subprocess.check_output subprocess.getoutput"),
    **kinds("database", "psycopg2.connect psycopg.connect pymysql.connect MySQLdb.connect"),
    **kinds("database", "sqlite3.connect"),
}
# What makes a client whose every method blocks (a driver's connection is
# left to METHODS: its cursor() does not block).
CLIENTS = {
    **kinds("http", "requests.Session httpx.Client urllib3.PoolManager"),
    **kinds("http", "http.client.HTTPConnection http.client.HTTPSConnection"),
    **kinds("database", "redis.Redis redis.StrictRedis redis.from_url pymongo.MongoClient"),
    **kinds("database", "psycopg2.pool.SimpleConnectionPool psycopg2.pool.ThreadedConnectionPool"),
    **kinds("database", "psycopg_pool.ConnectionPool"),
}
# Methods that block on whatever object they are called (every driver's,
# this project's PoolWrapper's and rating Sources'), and those of a pathlib.Path.
METHODS = {
    **kinds("database", "acquire execute executemany executescript transaction commit rollback"),
    **kinds("database", "fetch fetchrow fetchval fetchone fetchall fetchmany getconn"),
    **kinds("http", "fetch_rating"),
    **kinds("file", "read_text write_text read_bytes write_bytes"),
}


@dataclass
class Finding:
    path: str
    line: int
    chain: list  # the view, then each function of the codebase called on the way
    call: str  # the call as written
    kind: str

    def __str__(self):
        return f"{self.path}:{self.line} {' -> '.join(self.chain)} -> {self.call} ({self.kind})"


def clients_made(module, statements):
    """{name: kind} of the clients statements assign (x = requests.Session(),
    with httpx.Client() as x), not looking into nested functions."""
    found = {}
    for node in walk(statements):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            kind = CLIENTS.get(module.dotted(node.value.func))
            targets = [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
            kind = CLIENTS.get(module.dotted(node.context_expr.func))
            variable = node.optional_vars
            targets = [variable.id] if isinstance(variable, ast.Name) else []
        else:
            continue
        found.update(dict.fromkeys(targets, kind) if kind else {})
    return found


def clients_given(module, function):
    """{name: kind} of the function's parameters annotated with a client's
    type (`client: httpx.Client`): a client made once and handed in, as an
    app keeps one per worker, blocks as one made here does."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    found = {}
    for parameter in parameters:
        if parameter.annotation is not None:
            kind = CLIENTS.get(module.dotted(parameter.annotation))
            found.update({parameter.arg: kind} if kind else {})
    return found


@cache
def module_clients(module):
    """The clients a module makes at its top level."""
    return clients_made(module, module.tree.body)


def calls(function):
    """The calls a function makes itself, in line order, less those it
    awaits: await x(), async with x(), async for ... in x()."""
    body = function.node.body
    awaited = set()
    for node in walk(body):
        if isinstance(node, ast.Await):
            awaited.add(id(node.value))
        elif isinstance(node, ast.AsyncWith):
            awaited |= {id(item.context_expr) for item in node.items}
        elif isinstance(node, ast.AsyncFor):
            awaited.add(id(node.iter))
    found = [node for node in walk(body) if isinstance(node, ast.Call) and id(node) not in awaited]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def kind_of(call, module, clients):
    """The kind of blocking call this is, or None. clients: the function's
    own ({name: kind}), over the module's."""
    func = call.func
    name = module.dotted(func)
    if name in BLOCKING:
        return BLOCKING[name]
    if isinstance(func, ast.Name):
        return "database" if func.id == "acquire" else None  # a codebase's own pool
    if not isinstance(func, ast.Attribute):
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name) and receiver.id in clients:
        return clients[receiver.id]
    if isinstance(receiver, ast.Call) and module.dotted(receiver.func) in CLIENTS:
        return CLIENTS[module.dotted(receiver.func)]  # requests.Session().get(...)
    return METHODS.get(func.attr)


def reached(view, index):
    """The blocking calls a view makes, itself or through the codebase's
    functions it calls (each followed once per view)."""
    found, seen = [], {view}
    todo = [(view, [view.label])]
    while todo:
        function, chain = todo.pop(0)
        module = function.module
        clients = {
            **module_clients(module),
            **clients_given(module, function.node),
            **clients_made(module, function.node.body),
        }
        for call in calls(function):
            kind = kind_of(call, module, clients)
            if kind:
                text = ast.unparse(call.func)
                text = text if len(text) <= 60 else text[:57] + "..."
                found.append(Finding(str(module.path), call.lineno, chain, text, kind))
                continue
            for target in index.targets(call, function):
                if target not in seen:
                    seen.add(target)
                    todo.append((target, [*chain, target.label]))
    return found


def audit(path):
    """{view: its findings} of the codebase at path, every view in it."""
    path = Path(path)
    index = Index(path if path.is_dir() else path.parent / path.stem, python_files(path))
    return {view: reached(view, index) for view in index.views()}


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
    views = audit(path)
    findings = [finding for found in views.values() for finding in found]
    for finding in findings:
        print(finding)
    blocking = sum(1 for found in views.values() if found)
    print(
        f"{len(findings)} blocking calls in {blocking} of {len(views)} views under {path}",
        file=sys.stderr,
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
