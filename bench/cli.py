"""./benchmark.sh: its command line (bench/arguments.py) checked and turned into
the run's Options (bench/options.py), then the run (bench/run.py)."""

import shutil
import signal
import sys

from bench.arguments import parser
from bench.errors import BenchmarkError
from bench.modes import tune
from bench.options import FIELDS, grouped
from bench.routes import ROUTES
from bench.run import run
from bench.stack import pgbouncer
from bench.stack.budget import DEFAULT_CONNECTIONS
from bench.stack.deployments import NoThreads
from bench.stack.lineup import lineup
from infra.apps import names
from tools import proxy


def interrupt(signum, frame):
    """SIGTERM stops a run as Ctrl-C does: through the cleanup in run()."""
    raise KeyboardInterrupt


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


def refusal(args, apps):
    """Why these options cannot run, in one sentence; None when they can."""
    if args.tune and (args.target or args.rates):
        return "--tune measures closed loop the apps it starts: not with --target or --rate"
    if args.target:
        if len(apps) != 1:
            return "--target measures one server: name one APP to label it"
        writing = [ROUTES[key].label for key in args.routes or [] if ROUTES[key].writes]
        if writing and not args.database_url:
            return (
                f"{writing[0]} writes reviews into the target's database: give --database-url "
                "(the run then writes them to a film of its own, counts them and removes them), "
                "or leave review out of --routes"
            )
        started = {
            "--replicas starts copies of an app": args.replicas != [1],
            "--db-delay puts a proxy between the apps it starts and Postgres": any(args.db_delays),
            "--pgbouncer goes between the apps it starts and Postgres": args.pgbouncer,
        }
        return next((f"{what}: not with --target" for what, on in started.items() if on), None)
    unknown = [app for app in apps if app not in names()]
    if unknown:
        return f"unknown app {', '.join(unknown)}; choose from {', '.join(names())} or all"
    return None


def missing_tool(args):
    """The system tool these options need and this machine lacks, as advice."""
    if (not args.rates or args.rates == "auto") and not shutil.which("wrk"):
        return "wrk is not installed: apt-get install wrk (Debian/Ubuntu), brew install wrk (macOS)"
    if (args.proxy != "off" or max(args.replicas) > 1) and not proxy.binary():
        return "--proxy and --replicas need nginx: apt-get install nginx-light (Debian/Ubuntu)"
    if args.pgbouncer and not pgbouncer.binary():
        return "--pgbouncer needs PgBouncer: apt-get install pgbouncer (Debian/Ubuntu)"
    if args.pin and not shutil.which("taskset"):
        return "--pin needs taskset (util-linux)"
    return None


def options_of(args, apps, argv):
    """The run's typed Options (bench/options.py): the parsed command line,
    each option under its field's name (its dest), and what is derived here."""
    given = vars(args) | {
        "apps": apps,
        "deployments": ["external"] if args.target else deployments_of(args),
        "env": dict(args.env),
        "command": shown_command(argv),
        "proxy": "off" if args.target else args.proxy,
        "replicas": tuple(dict.fromkeys(args.replicas)),
        "routes": routes_of(args),
    }
    return grouped(**{name: given[name] for name in FIELDS})


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    apps = list(names()) if args.apps == ["all"] else args.apps  # all: Flask first
    problem = refusal(args, apps) or missing_tool(args)
    if problem:
        sys.exit(problem)
    signal.signal(signal.SIGTERM, interrupt)
    options = options_of(args, apps, argv)
    budget = options.stack.db_connections or DEFAULT_CONNECTIONS
    try:  # what the run starts, resolved once: every app's shape checked
        slots = [] if args.target else lineup(options.stack, budget)
    except NoThreads as error:
        sys.exit(f"--worker-threads: {error}")
    if not args.target and not slots:
        sys.exit("none of these apps runs under the servers named (WSGI or ASGI: see --help)")
    if args.port and len(slots) > 1:
        sys.exit(
            f"--port gives one app its port, and this run starts {len(slots)}: leave it out "
            "(each then listens on a free port)"
        )
    try:
        run(options, slots)
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
    except KeyboardInterrupt:
        sys.exit("interrupted: everything started was stopped")
