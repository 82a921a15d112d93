"""The layers of an app's CPU (--profile): which code a sampled stack is in.

One table, RULES, assigns a frame to a layer by the file it is in; a
sample is the layer of its innermost frame that some rule claims. The
standard library's modules other than asyncio and json claim nothing: a
sample in socket, threading or selectors is the layer of the code that
called it (gunicorn's, asyncio's, psycopg2's...). A sample no frame of which
is claimed, or whose innermost claimed frame is of a package no rule names,
is "other": a finding to explain when it is large, not a bucket.

The kernel is not sampled: it is the processes' share of system time
(stime, from /proc); the samples share out the rest (bench/sut/sampler.py),
so that the layers add up to the app's CPU per request.

Frames are kept shortened, so that a saved profile names no path of the
machine it ran on: a package's file from its site-packages
("flask/app.py"), the standard library's under "<stdlib>/", the project's
under "<project>/", code compiled at start under "<compiled>/" (Sanic
rewrites a few of its methods when it starts: their file is the method's
name), anything else under "<other>/" by its file name."""

import re

from infra import ROOT

# name -> what it holds, in the report's order.
LAYERS = {
    "server": "the HTTP server: gunicorn, uvicorn and httptools, Sanic's server and HTTP/1 code",
    "framework": "routing, requests and responses: Flask and Werkzeug, Quart, Sanic, Falcon",
    "driver": "the database driver: psycopg2, asyncpg",
    "event loop": "asyncio and uvloop",
    "JSON": "encoding and decoding JSON: the json module, orjson, ujson",
    "HTTP client": "the rating sources' client: aiohttp (async apps), httpx (sync apps)",
    "own code": "the project's own: the app's package and common/",
    "other": "a package no rule names, or a stack no rule claims",
    "kernel": "system calls: the processes' system time, not sampled",
}
OTHER, KERNEL = "other", "kernel"

# (where a frame's file is, as shortened(); its layer, or None: the caller's),
# the first rule whose prefix matches.
RULES = [
    ("sanic/server/", "server"),
    ("sanic/http/", "server"),
    ("<compiled>/http1_", "server"),
    ("<compiled>/send", "server"),
    ("<compiled>/read", "server"),
    ("<compiled>/connection_task", "server"),
    ("<compiled>/handle_", "framework"),
    ("<compiled>/_run_", "framework"),
    ("gunicorn/", "server"),
    ("uvicorn/", "server"),
    ("httptools/", "server"),
    ("hypercorn/", "server"),
    ("flask/", "framework"),
    ("werkzeug/", "framework"),
    ("quart/", "framework"),
    ("sanic/", "framework"),
    ("sanic_routing/", "framework"),
    ("falcon/", "framework"),
    ("blinker/", "framework"),
    ("itsdangerous/", "framework"),
    ("jinja2/", "framework"),
    ("markupsafe/", "framework"),
    ("psycopg2/", "driver"),
    ("asyncpg/", "driver"),
    ("uvloop/", "event loop"),
    ("<stdlib>/asyncio/", "event loop"),
    ("<stdlib>/json/", "JSON"),
    ("orjson/", "JSON"),
    ("ujson", "JSON"),
    ("aiohttp/", "HTTP client"),
    ("aiohappyeyeballs/", "HTTP client"),
    ("yarl/", "HTTP client"),
    ("multidict/", "HTTP client"),
    ("httpx/", "HTTP client"),
    ("httpcore/", "HTTP client"),
    ("h11/", "HTTP client"),
    ("anyio/", "HTTP client"),
    ("sniffio/", "HTTP client"),
    ("<project>/", "own code"),
    ("<stdlib>/", None),
    ("typing_extensions", None),
]

FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*)\)$")
STDLIB = re.compile(r"/lib/python3\.\d+/(?P<rest>.*)$")


def location(file):
    """A frame's file, shortened: "<project>/common/sources.py",
    "flask/app.py", "<stdlib>/json/encoder.py", "<other>/name.py"; code
    compiled at start with its method's name as its file (Sanic's touch-ups
    of its request handling and HTTP/1 methods) "<compiled>/name"."""
    if "site-packages/" in file:
        return file.rsplit("site-packages/", 1)[1]
    if file.startswith("<"):  # "<frozen abc>", "<string>": the interpreter's own
        return "<stdlib>/" + file.strip("<>")
    if "/" not in file and not file.endswith(".py"):
        return "<compiled>/" + file
    root = str(ROOT) + "/"
    if file.startswith(root) and not file[len(root) :].startswith(".venv"):
        return "<project>/" + file[len(root) :]
    stdlib = STDLIB.search(file)
    if stdlib:
        return "<stdlib>/" + stdlib.group("rest")
    return "<other>/" + file.rsplit("/", 1)[-1]


def shortened(frame):
    """A frame of py-spy's raw output as saved: "function (location)", or
    "process PID" for the frame that names a process (its command line left out)."""
    if frame.startswith("process "):
        return frame.split(":", 1)[0]
    found = FRAME.match(frame)
    if not found:
        return frame
    return f"{found.group('function')} ({location(found.group('file'))})"


def frame_layer(frame):
    """The layer a shortened frame is in, None where it is its caller's, or
    OTHER for a package no rule names."""
    found = FRAME.match(frame)
    if not found:
        return None  # a process's frame, or one py-spy could not name
    where = found.group("file")
    for prefix, layer in RULES:
        if where.startswith(prefix):
            return layer
    return OTHER


def stack_layer(stack):
    """The layer of one sampled stack ("outer;...;inner"): its innermost
    frame's that a rule claims, else OTHER."""
    for frame in reversed(stack.split(";")):
        layer = frame_layer(frame)
        if layer is not None:
            return layer
    return OTHER


def packed(stacks):
    """{stack: count} as saved: {"frames": [every frame once], "stacks":
    {"0;1;5": count, ...}} (each stack as its frames' indexes, outer first):
    a profile's stacks repeat the same few hundred frames, each written once."""
    index, found = {}, {}
    for stack, count in stacks.items():
        key = ";".join(str(index.setdefault(frame, len(index))) for frame in stack.split(";"))
        found[key] = found.get(key, 0) + count
    return {"frames": list(index), "stacks": found}


def unpacked(saved):
    """{stack: count} of packed()'s form."""
    frames = saved["frames"]
    return {
        ";".join(frames[int(i)] for i in key.split(";")): count
        for key, count in saved["stacks"].items()
    }


def attributed(stacks):
    """{layer: samples} of {stack: count}, every sampled layer present."""
    found = {layer: 0 for layer in LAYERS if layer != KERNEL}
    for stack, count in stacks.items():
        found[stack_layer(stack)] += count
    return found


def per_request(sampled, app_us):
    """{layer: CPU µs per request} of an app that spent app_us per request
    (the part "app", bench/sut/cost.py): its user share (the sampled
    processes' user time over their CPU) shared out by the samples, and its
    system share, the kernel's; None without samples or CPU."""
    counts = attributed(unpacked(sampled["stacks"]))
    total = sum(counts.values())
    spent = sampled["user_s"] + sampled["system_s"]
    if not total or not spent or not app_us:
        return None
    user_us = app_us * sampled["user_s"] / spent
    found = {layer: round(user_us * count / total, 1) for layer, count in counts.items()}
    found[KERNEL] = round(app_us * sampled["system_s"] / spent, 1)
    return found
