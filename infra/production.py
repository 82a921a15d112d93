"""Each app's production server, read from its serve.sh, the one description
of it: the program it execs and the options it passes, the worker processes
it runs for a CPU budget (serve.sh's own default, evaluated by sh with nproc
answering the budget), the threads of each, whether a request holds its
thread while it waits on Postgres (gunicorn's sync and gthread workers do),
and the distributions it runs on."""

import functools
import os
import shlex
import subprocess
from dataclasses import dataclass

from infra import apps


@dataclass(frozen=True)
class Production:
    app: str
    argv: tuple  # the words serve.sh execs, as written (variables unexpanded)

    def option(self, name):
        """The value serve.sh gives option name, or None."""
        words = list(self.argv)
        return words[words.index(name) + 1] if name in words else None

    @property
    def program(self):
        return self.argv[0]

    @property
    def holds_thread(self):
        """Whether a request holds its thread (a sync worker: its process) while
        it waits on Postgres: gunicorn's sync and gthread workers."""
        return self.option("--worker-class") in ("sync", "gthread")

    @property
    def threaded(self):
        """Whether its processes run threads: gunicorn's gthread worker, whose
        count serve.sh reads from WEB_THREADS (see threads_settings)."""
        return self.option("--worker-class") == "gthread"

    def threads(self, cores):
        """Threads per process as serve.sh runs them (WEB_THREADS unset): 1
        where it runs none."""
        return evaluated(self.option("--threads"), cores) if self.threaded else 1

    def threads_settings(self, threads):
        """The environment that gives each process `threads` threads."""
        return {"WEB_THREADS": str(threads)} if self.threaded else {}

    def workers(self, cores):
        """serve.sh's worker count when nproc says cores (WEB_WORKERS unset)."""
        return evaluated(self.option("--workers"), cores)

    @property
    def packages(self):
        """The distributions it runs on: framework, server, loop and parser,
        what else its app.toml names, driver (infra/apps.py)."""
        app = apps.get(self.app)
        framework, *more = app.packages
        http = self.option("--http")
        if http and ":" in http:  # a protocol class of the project's: app.toml names its parser
            http = None
        names = [framework, self.program, self.option("--loop"), http]
        return list(dict.fromkeys(name for name in [*names, *more, app.driver] if name))


@functools.cache
def evaluated(expression, cores):
    script = f"nproc() {{ echo {cores}; }}; echo {expression}"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no WEB_WORKERS
    completed = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True)
    return int(completed.stdout)


@functools.cache
def read(app):
    """The Production of app's serve.sh: the words of its exec line."""
    text = apps.get(app).serve.read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if line.strip().startswith("exec ")]
    return Production(app, tuple(shlex.split(line)[1:]))
