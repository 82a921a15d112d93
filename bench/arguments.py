"""./benchmark.sh's command line: the options of every run (what it starts,
how it loads each app, where the results go) and each mode's own, which the
mode adds in a group of its own (bench/modes/); each stored under the name of
its Options field (bench/options.py). The parsers of the values are
bench/parsers.py and bench/addresses.py; bench/cli.py turns what it parses
into the run's Options."""

import argparse
import os

from bench import modes
from bench.addresses import database_url, results_folder, target_url, write_token_file
from bench.parsers import (
    choice_list,
    env_setting,
    int_list,
    pin_spec,
    positive,
    positive_seconds,
    repeats,
    seconds,
)
from bench.routes import DEFAULT_ROUTES, ROUTES
from bench.sut.budget import DEFAULT_CONNECTIONS
from bench.sut.servers import PRODUCTION, SERVERS
from infra.apps import known, names
from tools.command import Parser
from tools.serve import port_number

EPILOG = """\
examples:
  ./benchmark.sh quart                       about a minute: tuned deployment, 20 connections
  ./benchmark.sh all --deployment both       every app, article's and tuned deployments
  ./benchmark.sh flask quart -c 20,64,256    a concurrency sweep
  ./benchmark.sh flask falcon --server all   every WSGI server with both WSGI apps
  ./benchmark.sh all --rate auto             latency at the same fixed loads for every app
  ./benchmark.sh flask sanic --rate 500,1000 open-loop runs at these requests/s
  ./benchmark.sh all --db-delay 0,1ms,5ms,20ms -c 10,100
                                             when async pays: Postgres farther away, swept
  ./benchmark.sh flask flask_threads quart --fan-out 1,3,10 --upstream-delay 10ms,50ms
                                             when a request waits on other services
  ./benchmark.sh flask quart --replicas 1,2,4
                                             1, 2 and 4 copies of each app behind nginx
  ./benchmark.sh all --duration 5m           the article's run length
  ./benchmark.sh quart --target http://quart:8000 --database-url postgresql://...
                                             measure a server that is already running
  ./benchmark.sh --serve flask --port 8000   serve an app until Ctrl-C

Results go to a folder of their own per run, results/<time>-<apps>/: JSON,
Markdown, the explorer's page, PNG charts and logs. Without DATABASE_URL /
--database-url, a throwaway Postgres runs in .pgdata/.
Writes: reviews to a film the run adds, both removed when it ends; no other row
of the database is written or deleted (docs/benchmark.md).
A bad value is refused in one line (exit 2) before anything starts; Ctrl-C,
SIGTERM and SIGHUP stop everything started.
"""


def parser():
    p = Parser(
        prog="./benchmark.sh",
        description="Measure the apps with wrk, Postgres alone with pgbench, and compare.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "apps",
        nargs="+",
        metavar="APP",
        help=f"one or more of: {', '.join(known())}; or all ({', '.join(names())})",
    )
    # 5s and 1s: a first ./benchmark.sh APP within a minute, installs included
    # (the figures of one run are noisy anyway: --repeat, --duration 5m for more).
    p.add_argument(
        "--duration", type=positive_seconds, default=5, help="per measured run (default 5s)"
    )
    p.add_argument(
        "--warmup",
        type=seconds,
        default=1,
        help="unmeasured run before each measured one (default 1s; 0: none)",
    )
    p.add_argument(
        "-c",
        "--connections",
        type=int_list,
        default=[20],
        help="wrk connections; a list sweeps, e.g. 20,64,256 (default 20, the article's)",
    )
    p.add_argument("-t", "--threads", type=positive, default=2, help="wrk threads (default 2)")
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=10,
        help="wrk counts a slower response as a timeout error (default 10s)",
    )
    p.add_argument(
        "--routes",
        type=choice_list(list(ROUTES)),
        help=f"comma list of {', '.join(ROUTES)} (default {', '.join(DEFAULT_ROUTES)}, or ratings "
        "with --fan-out; with --target and no "
        "--database-url, the reads only). review posts reviews to a film the run adds and "
        "removes with them when it ends: no other row is written or deleted",
    )
    p.add_argument(
        "--repeat",
        type=repeats,
        default=1,
        help="runs per figure; the report shows the median and min-max (default 1)",
    )
    p.add_argument(
        "--deployment",
        type=choice_list(["article", "tuned", "unbounded"], "both", ["article", "tuned"]),
        default=["tuned"],
        help="a comma list of article, tuned (each app's serve.sh), unbounded (tuned without "
        "its admission limit), or both: article,tuned (default tuned; see "
        "bench/sut/deployments.py)",
    )
    p.add_argument(
        "--server",
        type=choice_list([PRODUCTION, *SERVERS], "all"),
        help="run each app under these servers instead of a deployment: a comma list of "
        f"{', '.join([PRODUCTION, *SERVERS])}, or all (each app under those that serve its "
        "interface, WSGI or ASGI; serve.sh is its own; see bench/sut/servers.py)",
    )
    p.add_argument(
        "--workers",
        type=positive,
        help="worker processes for every app (default: the deployment's, per CPU budget)",
    )
    p.add_argument(
        "--worker-threads",
        type=positive,
        metavar="N",
        help="threads per worker process, for every server that has them (gunicorn's "
        "gthread, as Flask's and Falcon's serve.sh run it, 16 threads by default; "
        "waitress, Twisted, Granian's blocking threads); a server named with --server that has "
        "none refuses it; an event loop's serve.sh runs as it is",
    )
    p.add_argument(
        "--db-connections",
        type=positive,
        metavar="N",
        help="database connections each app may hold, split across its processes by what "
        "each can use: a sync worker 1, a threaded one its threads, an event loop an equal "
        f"share (default {DEFAULT_CONNECTIONS}, lowered to fit a Postgres of yours)",
    )
    p.add_argument(
        "--env",
        type=env_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set for every app's server, over the deployment's; repeatable, e.g. "
        "--env POOL_TIMEOUT=2 --env GUNICORN_CMD_ARGS=--backlog=4096",
    )
    p.add_argument(
        "--database-url",
        type=database_url,
        default=os.environ.get("DATABASE_URL") or None,
        help="default DATABASE_URL, else a throwaway Postgres in .pgdata/",
    )
    p.add_argument(
        "--target",
        type=target_url,
        metavar="URL",
        help="measure this already-running server; APP only labels it",
    )
    p.add_argument(
        "--write-token-file",
        type=write_token_file,
        default=os.environ.get("WRITE_TOKEN_FILE") or None,
        metavar="FILE",
        help="a file holding the door's write token (proxy/door.conf): every write the run "
        "sends carries Authorization: Bearer <token>, for a --target behind a door that has "
        "one (default WRITE_TOKEN_FILE)",
    )
    p.add_argument(
        "--port", type=port_number, default=0, help="port for the app (default: a free one)"
    )
    p.add_argument(
        "--pin",
        type=pin_spec,
        metavar="APP:DB:LOAD",
        help="taskset CPU lists for app, Postgres and wrk/pgbench, e.g. 0:1:1",
    )
    p.add_argument(
        "--proxy",
        choices=["off", "on", "both", "door", "limit"],
        default="off",
        help="nginx in front of every app (proxy/api.inc): off, on, or both to measure "
        "what it costs, side by side; door: nginx plain and with the deployed door's rules "
        "(limits, JSON access log, TLS: proxy/door.conf), side by side; limit: nginx plain "
        "and refusing past what each copy can work on at once (max_conns: its threads or its "
        "pool; 503 with Retry-After), side by side (default off)",
    )
    p.add_argument(
        "--pgbouncer",
        action="store_true",
        help="every app reaches Postgres through a PgBouncer of its own (Debian's package, "
        "transaction pooling, its pool at Postgres the app's --db-connections: "
        "bench/sut/pgbouncer.py), with TRANSACTION_POOLING=1; the app's processes then keep "
        "the pools they can use, sharing that budget",
    )
    p.add_argument(
        "--replicas",
        type=int_list,
        default=[1],
        metavar="N[,N...]",
        help="run N copies of each app's server behind nginx, sharing the app's worker "
        "processes and database connections (bench/sut/replicas.py); a list, e.g. 1,2,4, "
        "measures each count side by side in rotation (default 1: one copy, as --proxy says)",
    )
    p.add_argument(
        "--results",
        dest="results_dir",
        type=results_folder,
        default="results",
        help="where each run makes its folder (default results/; relative to the project)",
    )
    modes.options(p)
    return p
