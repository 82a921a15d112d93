"""./benchmark.sh: its command line (bench/arguments.py) checked and turned into
the run's Options (bench/options.py), then the run (bench/run.py). A bad value
is refused in one line before anything starts (exit 2); a run that cannot go
on says why in one line (exit 1); Ctrl-C, SIGTERM or SIGHUP stop everything
it started (exit 1)."""

import sys

from bench.arguments import parser
from bench.errors import BenchmarkError
from bench.modes import tune
from bench.options import FIELDS, grouped
from bench.preflight import missing
from bench.refusals import refusal
from bench.routes import ROUTES
from bench.run import run
from infra.apps import names
from tools.command import one_line, stop_on_signals


def shown_command(argv):
    """The command as saved in the results: a database URL may hold a password."""
    shown = ["./benchmark.sh"]
    for arg in argv:
        if shown[-1] == "--database-url":
            arg = "$DATABASE_URL"
        elif arg.startswith("--database-url="):
            arg = "--database-url=$DATABASE_URL"
        shown.append(arg)
    return " ".join(shown)


def deployments_of(args):
    if args.tune:
        return tune.candidates()
    return args.server or args.deployment


def routes_of(args):
    """--routes, or every route; with --target and no database, the reads: the
    reviews a POST run writes must be counted and removed by the run."""
    if args.routes is not None:
        return args.routes
    if args.target and not args.database_url:
        return [key for key in ROUTES if not ROUTES[key].writes]
    return list(ROUTES)


def options_of(args, apps, argv):
    """The run's typed Options (bench/options.py): the parsed command line,
    each option under its field's name (its dest), and what is derived here."""
    given = vars(args) | {
        "apps": apps,
        "deployments": ["external"] if args.target else deployments_of(args),
        "env": dict(args.env),
        "command": shown_command(argv),
        "proxy": "off" if args.target else args.proxy,
        "replicas": tuple(args.replicas),
        "routes": routes_of(args),
    }
    return grouped(**{name: given[name] for name in FIELDS})


def checked(argv):
    """(the run's Options, its lineup: what it starts), or exit 2 with one
    line on stderr saying which value is wrong and why. Starts nothing."""
    command_line = parser()
    args = command_line.parse_args(argv)
    apps = list(names()) if args.apps == ["all"] else args.apps  # all: Flask first
    options = options_of(args, apps, argv)
    problem, slots = refusal(options)
    if problem:
        command_line.error(problem)
    return options, slots


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    options, slots = checked(argv)
    # The tools these options need: benchmark.sh installed them before pip.
    problem = missing(argv)
    if problem:
        sys.exit(problem)
    stop_on_signals()
    try:
        run(options, slots)
    except (BenchmarkError, OSError) as error:  # OSError: the results' disk full...
        sys.exit(f"benchmark failed: {one_line(str(error))}")
    except KeyboardInterrupt:
        sys.exit("interrupted: everything started was stopped")
