"""Why a run's Options cannot run, in one sentence, before anything starts:
what depends on two options, on what the run would start (its lineup,
resolved here once), or on this machine (its open-file limit, a port taken).
Each value alone is checked as it is parsed (bench/parsers.py, bench/addresses.py); bench/cli.py
prints the first refusal found, and exits 2."""

import resource

from bench import modes
from bench.plan import plan
from bench.routes import ROUTES
from bench.sut import pgbouncer
from bench.sut.budget import DEFAULT_CONNECTIONS
from bench.sut.deployments import NoThreads
from bench.sut.lineup import lineup
from bench.sut.processes import PortTaken, free_port
from infra.apps import known
from tools import proxy

# wrk's own open files beside its connections: stdin, stdout, stderr, and an
# event loop per thread (counted apart). Measured: under `ulimit -n 100`,
# wrk -t 2 opens 95 connections, and fails to connect the 96th.
WRK_OWN_FILES = 3
LONGEST_RUN_DAYS = 7


def refusal(options):
    """(the first reason these options cannot run, or None; the lineup: the
    Slots the run starts, none for --target)."""
    alone = (modes.refused, target, apps, tasks, open_files, proxied_clients, copies, port_free)
    problem = next(filter(None, (check(options) for check in alone)), None)
    if problem:
        return problem, []
    try:  # every app's shape, checked
        slots = [] if options.target else lineup(options.sut, budget_of(options))
    except NoThreads as error:
        return f"--worker-threads: {error}", []
    with_lineup = (served, one_port, bounced_clients, length)
    return next(filter(None, (check(options, slots) for check in with_lineup)), None), slots


def budget_of(options):
    """Each app's connection budget, as asked (a Postgres of yours may lower it)."""
    return options.sut.db_connections or DEFAULT_CONNECTIONS


def target(options):
    if not options.target:
        return None
    if len(options.sut.apps) != 1:
        return "--target measures one server: name one APP to label it"
    writing = [ROUTES[key].label for key in options.routes if ROUTES[key].writes]
    if writing and not options.database_url:
        return (
            f"{writing[0]} writes reviews into the target's database: give --database-url "
            "(the run then writes them to a film of its own, counts them and removes them), "
            "or leave review out of --routes"
        )
    started = {
        "--replicas starts copies of an app": options.sut.replicas != (1,),
        "--pgbouncer goes between the apps it starts and Postgres": options.sut.pgbouncer,
    }
    return next((f"{what}: not with --target" for what, on in started.items() if on), None)


def apps(options):
    named = options.sut.apps
    if "all" in named:
        return "all names every app: give it alone"
    unknown = [app for app in named if app not in known()]
    if unknown:
        return f"unknown app {', '.join(unknown)}; choose from {', '.join(known())} or all"
    if any(named.count(app) > 2 for app in named):
        return "an app is named three times: twice is the A/A control (flask#1, flask#2), no more"
    return None


def served(options, slots):
    if not options.target and not slots:
        return "none of these apps runs under the servers named (WSGI or ASGI: see --help)"
    return None


def one_port(options, slots):
    if options.sut.port and len(slots) > 1:
        return (
            f"--port gives one app its port, and this run starts {len(slots)}: leave it out "
            "(each then listens on a free port)"
        )
    return None


def tasks(options):
    """An app's processes and threads are tasks, which the kernel numbers
    from a pool of kernel.pid_max for the whole machine."""
    sut = options.sut
    asked = (sut.workers or 1) * (sut.worker_threads or 1)
    try:
        with open("/proc/sys/kernel/pid_max") as file:
            limit = int(file.read())
    except OSError:  # not Linux
        return None
    if asked > limit:
        return (
            f"--workers x --worker-threads: {asked:,} processes and threads, and this "
            f"machine runs at most {limit:,} (kernel.pid_max)"
        )
    return None


def open_files_limit():
    """How many files this process, and what it starts, may open (ulimit -n)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def open_files(options):
    """wrk (or the open-loop generator) holds each connection open at once,
    and an app's event loop may hold its whole database budget."""
    limit, runs = open_files_limit(), options.runs
    if limit is None:
        return None
    most = max(runs.connections)
    needed = most + min(runs.threads, most) + WRK_OWN_FILES
    if needed > limit:
        return (
            f"-c {most} with -t {runs.threads}: wrk needs {needed} open files, and this "
            f"process may open {limit} (ulimit -n): lower -c, or raise the limit"
        )
    if not options.target and (options.sut.db_connections or 0) > limit:
        return (
            f"--db-connections {options.sut.db_connections}: one app process may hold all "
            f"of them, and may open {limit} files (ulimit -n)"
        )
    return None


def proxied_clients(options):
    sut = options.sut
    if sut.proxy == "off" and max(sut.replicas) == 1:
        return None
    limit = proxy.client_limit()
    if max(options.runs.connections) > limit:
        return (
            f"-c {max(options.runs.connections)}: nginx (--proxy, --replicas) takes at most "
            f"{limit:,} clients at once (proxy/nginx.conf); more would be reset"
        )
    return None


def bounced_clients(options, slots):
    """Behind PgBouncer the budget does not cap an app's processes, its clients."""
    for slot in slots if options.sut.pgbouncer else []:
        clients = slot.deployment.copies * slot.shape.connections
        if clients > pgbouncer.CLIENT_LIMIT:
            return (
                f"{slot.label} would open {clients:,} connections to its PgBouncer, "
                f"which takes {pgbouncer.CLIENT_LIMIT:,}: fewer --workers or --worker-threads"
            )
    return None


def copies(options):
    budget, most = budget_of(options), max(options.sut.replicas)
    if most <= budget:
        return None
    return f"--replicas {most}: each copy holds one of the app's {budget} --db-connections at least"


def port_free(options):
    if options.sut.port and not options.target:
        try:
            free_port(options.sut.port)
        except PortTaken as error:
            return str(error)
    return None


def length(options, slots):
    """A run that would last longer than a week is a mistake, not a plan."""
    seconds = sum(count * each for count, each in plan(options, len(slots) or 1).values())
    days = seconds / 86400
    if days > LONGEST_RUN_DAYS:
        return (
            f"this run would take about {days:,.0f} days (--repeat x --duration x the lists "
            f"given): at most {LONGEST_RUN_DAYS}"
        )
    return None
