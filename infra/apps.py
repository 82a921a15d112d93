"""The app registry: every app, read from the app.toml in its own folder (as
TechEmpower's toolset reads each framework's benchmark_config.json), so that
adding an app, or a variant such as psycopg 3 Flask, is adding a folder.

An app's folder is NAME_app/ beside this project's (flask_app/, ...), or in
a folder that APPS_PATH names (os.pathsep-separated: an app kept elsewhere,
served and measured as these are). It holds the app's package, its
serve.sh (the one command that serves it in production) and app.toml:

    name = "flask"                   # what ./benchmark.sh and the tests call it
    order = 1                        # where it stands in every list
    framework = "Flask 3"            # as the docs name it
    packages = ["flask"]             # its framework's distributions, versioned in
                                     # reports (default: its name)
    interface = "wsgi"               # wsgi or asgi: the servers that can run it
    factory = "flask_app:create_app" # what each worker process calls once
                                     # (default: the folder's create_app)
    driver = "psycopg2-binary"       # what reaches Postgres, through its PoolWrapper in common/
    fan_out = "sequential"           # how its ratings route asks its sources: sequential
                                     # or concurrent (default: sequential for WSGI)

A variant (variants/NAME_app/: an app but for one change) is served and
measured when named, and is never one of names(): not in "all", compose or
the manifests.

    python -m infra.apps             # the table of the apps, as docs/architecture.md has it
"""

import functools
import os
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from infra import ROOT

INTERFACES = ("wsgi", "asgi")
FAN_OUTS = ("sequential", "concurrent")
VARIANTS = ROOT / "variants"


@dataclass(frozen=True)
class App:
    name: str
    order: int
    framework: str
    packages: tuple
    interface: str
    factory: str
    driver: str
    folder: Path
    fan_out: str = "sequential"  # its ratings route's calls out: sequential or concurrent

    @property
    def serve(self):
        """Its serve.sh: the one command that serves it in production."""
        return self.folder / "serve.sh"

    @property
    def serve_command(self):
        """How to run its serve.sh from the project's folder, as a person types it."""
        path = self.serve.relative_to(ROOT) if self.serve.is_relative_to(ROOT) else self.serve
        return ["sh", str(path)]

    @property
    def module(self):
        return self.folder.name

    @property
    def pythonpath(self):
        """Where its package is imported from, and the project's own packages."""
        return os.pathsep.join(dict.fromkeys([str(ROOT), str(self.folder.parent)]))


class BadApp(ValueError):
    """An app.toml that does not declare an app."""


def read(path):
    """The App an app.toml declares; BadApp says what is wrong with it."""
    try:
        data = tomllib.loads(path.read_text())
        app = App(
            name=data["name"],
            order=int(data["order"]),
            framework=data["framework"],
            packages=tuple(data.get("packages", [data["name"]])),
            interface=data["interface"],
            factory=data.get("factory", f"{path.parent.name}:create_app"),
            driver=data["driver"],
            folder=path.parent,
            fan_out=data.get("fan_out", FAN_OUTS[data["interface"] == "asgi"]),
        )
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as error:
        raise BadApp(f"{path}: {error}") from None
    if app.interface not in INTERFACES:
        raise BadApp(f"{path}: interface must be one of {', '.join(INTERFACES)}")
    if app.fan_out not in FAN_OUTS:
        raise BadApp(f"{path}: fan_out must be one of {', '.join(FAN_OUTS)}")
    if app.module != f"{app.name}_app" or not app.factory.startswith(f"{app.module}:"):
        raise BadApp(f"{path}: the folder must be {app.name}_app, and the factory in it")
    return app


def folders(environ=os.environ):
    """The folders apps are found in: the project's, then APPS_PATH's."""
    extra = [Path(part) for part in environ.get("APPS_PATH", "").split(os.pathsep) if part]
    return [ROOT, *extra]


def scan(where):
    """{name: App} of every app in the folders where, in their order."""
    found = [read(path) for folder in where for path in folder.glob("*_app/app.toml")]
    found.sort(key=lambda app: (app.order, app.name))
    by_name = {}
    for app in found:
        if app.name in by_name:
            other = by_name[app.name].folder
            raise BadApp(f"two apps are called {app.name}: {app.folder}, {other}")
        by_name[app.name] = app
    return by_name


@functools.cache
def registry():
    """{name: App} of every app this process can serve: scan(folders())."""
    return scan(folders())


@functools.cache
def known():
    """{name: App} of every app this process can serve when named: the
    registry, then the project's variants it does not hold already."""
    variants = scan([VARIANTS]) if VARIANTS.is_dir() else {}
    return {**registry(), **{name: app for name, app in variants.items() if name not in registry()}}


def names():
    """Every app's name, in order: Flask first (a variant only where APPS_PATH names it)."""
    return tuple(registry())


def get(name):
    """The App called name, a variant's too; KeyError names the apps there are."""
    try:
        return known()[name]
    except KeyError:
        raise KeyError(f"unknown app {name!r}; choose from {', '.join(known())}") from None


def table():
    """The apps as a Markdown table (docs/architecture.md holds it, checked)."""
    lines = ["| app | folder | framework | interface | driver | factory |", "|---" * 6 + "|"]
    for app in registry().values():
        folder = app.folder.relative_to(ROOT) if app.folder.is_relative_to(ROOT) else app.folder
        lines.append(
            f"| {app.name} | `{folder}/` | {app.framework} | {app.interface.upper()} "
            f"| {app.driver} | `{app.factory}()` |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
