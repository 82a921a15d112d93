"""./benchmark.sh: its command line (bench/arguments.py) checked and turned into
the run's Options (bench/options.py), then the run (bench/run.py). A bad value
is refused in one line before anything starts (exit 2); a run that cannot go
on says why in one line (exit 1); Ctrl-C, SIGTERM or SIGHUP stop everything
it started (exit 1)."""

import dataclasses
import sys

from bench import modes
from bench.arguments import parser
from bench.errors import BenchmarkError
from bench.options import flat_fields, grouped
from bench.preflight import missing
from bench.refusals import refusal
from bench.routes import DEFAULT_ROUTES, ROUTES
from bench.run import run
from bench.sut.lineup import tools_needed
from infra.apps import names
from tools.command import INTERRUPTED, one_line, stop_on_signals


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


def routes_of(options):
    """--routes, or the routes a mode chose (the ratings route with
    --fan-out), or the default routes; with --target and no database, the
    reads: the reviews a POST run writes must be counted and removed by the run."""
    if options.routes is not None:
        return options.routes
    if options.target and not options.database_url:
        return [key for key in DEFAULT_ROUTES if not ROUTES[key].writes]
    return DEFAULT_ROUTES


# The bridge from the command line to Options: every destination of the parser
# is a field of Options but these, which choose the deployments; every field is
# a destination but these, made here (tests/harness/test_modes.py holds both).
CHOOSING = ("deployment", "server")
MADE = ("deployments", "command")


def options_of(args, apps, argv):
    """The run's typed Options (bench/options.py): the parsed command line,
    each option under its field's name (its dest), what each mode fills in
    (its defaults: the ratings route and its sources), and what is derived here:
    the deployments are --server's or --deployment's, or a mode's choice
    (--tune's candidates), or the --target's "external"."""
    given = vars(args) | {
        "apps": apps,
        "deployments": ["external"] if args.target else args.server or args.deployment,
        "env": dict(args.env),
        "command": shown_command(argv),
        "proxy": "off" if args.target else args.proxy,
        "replicas": tuple(args.replicas),
    }
    kind = modes.options_type()
    options = modes.defaulted(grouped(kind, **{name: given[name] for name in flat_fields(kind)}))
    options = dataclasses.replace(options, routes=routes_of(options))
    chosen = None if args.target else modes.chosen(options)
    if chosen:
        options = dataclasses.replace(
            options, sut=dataclasses.replace(options.sut, deployments=chosen)
        )
    return options


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
    try:  # a Ctrl-C whenever it comes (held by benchmark.sh until stop_on_signals): one line
        options, slots = checked(argv)
        # The tools the run needs: benchmark.sh installed them before pip.
        problem = missing(modes.tools(options) + tools_needed(slots, options.sut))
        if problem:
            sys.exit(problem)
        stop_on_signals()
        run(options, slots)
    except (BenchmarkError, OSError) as error:  # OSError: the results' disk full...
        sys.exit(f"benchmark failed: {one_line(str(error))}")
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
