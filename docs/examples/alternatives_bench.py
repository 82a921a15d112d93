"""The guide's alternatives measured with this project's harness, beside the
apps they are alternatives to: flask_app/ and its flask[async] variant (one
gunicorn sync setup), quart_app/ (asyncpg) and its psycopg 3 variant (one
uvicorn setup). Each is started from the trees docs/migration/steps.sh makes,
under its own serve.sh and its default workers, then measured by
`./benchmark.sh APP --target URL` (APP only labels it), one after another:

    .venv/bin/python -m docs.examples.alternatives_bench [benchmark.sh options]

e.g. `--repeat 3 --duration 5s`. Results: results/alternatives-<name>/ (as
benchmark.sh writes them); every server and the database are stopped at the end.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from db import embedded
from tools import ROOT
from tools.serve import database, running

# name: (tree made by steps.sh, or None for the project's own app; package; label)
STATES = {
    "flask": (None, "flask_app", "flask"),
    "flask-async": ("flask-async", "flask_app", "flask"),
    "quart-asyncpg": (None, "quart_app", "quart"),
    "quart-psycopg": ("quart-psycopg", "quart_psycopg", "quart"),
}
COMMAND = ["sh", "-c", 'cd "$TREE" && exec sh "$PACKAGE/serve.sh"']


def measure(name, trees, url, options):
    tree, package, label = STATES[name]
    port = embedded.free_port()
    log = ROOT / "results" / f"alternatives-{name}.log"
    log.parent.mkdir(exist_ok=True)
    settings = {"tree": trees / tree if tree else ROOT, "package": package, "pythonpath": ROOT}
    with running(label, port, url, log, command=COMMAND, **settings) as server:
        subprocess.run(
            [
                *("./benchmark.sh", label, "--target", server.url, "--database-url", url),
                *("--results", f"results/alternatives-{name}", "--no-pgbench", *options),
            ],
            cwd=ROOT,
            check=True,
        )


def main():
    with tempfile.TemporaryDirectory() as directory, database() as url:
        trees = Path(directory)
        steps = ROOT / "docs" / "migration" / "steps.sh"
        subprocess.run(["bash", str(steps), "expand", str(trees)], check=True)
        for name in STATES:
            measure(name, trees, url, sys.argv[1:])


if __name__ == "__main__":
    main()
