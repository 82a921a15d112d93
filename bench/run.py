"""One benchmark run: database, ceiling, then each app in turn, measured under
identical conditions; results saved; everything started, stopped."""

import datetime
import json
import os
from dataclasses import dataclass
from pathlib import Path

import psycopg2

from db import embedded
from db.load import load
from tools.serve import start_app, stop, wait_healthy

from . import chart, database, deployments, environment, pgbench, report, verify, wrk
from .processes import (
    PortTaken,
    cpu_set,
    free_port,
    log_tail,
    pin_database,
    pinned,
    server_command,
)
from .wrk import ROUTES

ROOT = Path(__file__).resolve().parent.parent
EMBEDDED_DATABASE = "benchmark"  # its own database: the benchmark empties review
SPARE_CONNECTIONS = 10  # for the benchmark's own connection, psql, a curious human


class BenchmarkError(RuntimeError):
    """A run that cannot go on: no database, port taken, wrk failing..."""


class AppFailed(RuntimeError):
    """This app is not measured; the message says why, and the report too."""


@dataclass
class Options:
    apps: list
    deployments: list
    routes: list
    connections: list
    threads: int
    duration: int
    warmup: int
    timeout: int
    repeat: int
    workers: int | None
    pool_size: int
    env: dict
    database_url: str | None
    target: str | None
    port: int
    pin: dict | None
    pgbench: bool
    results_dir: str
    command: str


def say(message):
    print(message, flush=True)


def duration_text(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class Progress:
    """Which step runs, and how long is left, from the planned run count."""

    def __init__(self, options):
        per_run = options.duration + options.warmup
        runs = len(options.apps) * len(options.deployments) * len(options.connections)
        runs *= len(options.routes) * options.repeat
        startups = len(options.apps) * len(options.deployments) * 5
        ceiling = 0
        if options.pgbench and (options.database_url or not options.target):
            ceiling = len(options.connections) * len(options.routes) * options.duration
        self.left = runs * per_run + startups + ceiling

    def step(self, message, seconds):
        say(f"  {message}: {duration_text(seconds)} (about {duration_text(self.left)} left)")
        self.left = max(self.left - seconds, 0)


class Benchmark:
    def __init__(self, options, stamp):
        self.options = options
        self.stamp = stamp
        self.results_dir = (
            ROOT / options.results_dir
            if not os.path.isabs(options.results_dir)
            else Path(options.results_dir)
        )
        self.log_path = self.results_dir / f"{stamp}.log"
        self.progress = Progress(options)
        self.database_url = None
        self.connection = None
        self.stopped_database = False
        self.measurements = []
        self.apps = []
        self.ceiling = []

    # -- the database -------------------------------------------------------

    def cpus(self, role):
        """The CPU list --pin gives role (app, db, load), or None."""
        return self.options.pin and self.options.pin[role]

    def app_cores(self):
        """The app's CPU budget: the cores it is pinned to, else all."""
        pinned_to = self.cpus("app")
        return len(cpu_set(pinned_to)) if pinned_to else os.cpu_count()

    def connections_needed(self):
        cores = self.app_cores()
        workers = [
            int(deployments.settings(d, app, cores, self.options.workers)["WEB_WORKERS"])
            for d in self.options.deployments
            for app in self.options.apps
        ]
        return max(workers) * self.options.pool_size + SPARE_CONNECTIONS

    def open_database(self):
        """Connect (starting the embedded Postgres if need be) and load the data."""
        options = self.options
        if options.target:
            self.database_url = options.database_url
            if not self.database_url:
                say("no --database-url with --target: the nothing-lost check is skipped")
                return
        elif options.database_url:
            self.database_url = options.database_url
        else:
            needed = self.connections_needed()
            if embedded.running_port() is None:
                self.stopped_database = True  # started here: stopped here
            self.database_url = embedded.start(
                database=EMBEDDED_DATABASE, max_connections=max(needed, 100)
            )
        try:
            if not options.target:
                load(self.database_url)
            self.connection = database.connect(self.database_url)
        except database.DatabaseError as error:
            raise BenchmarkError(str(error)) from None
        except psycopg2.OperationalError as error:
            raise BenchmarkError(f"database unreachable: {str(error).strip()}") from None
        except psycopg2.Error as error:
            raise BenchmarkError(f"database unusable: {str(error).strip()}") from None
        settings = database.server_settings(self.connection)
        if options.target:
            return settings  # the target's own deployment decides its connections
        needed = self.connections_needed()
        if int(settings["max_connections"]) < needed:
            raise BenchmarkError(
                f"Postgres allows {settings['max_connections']} connections; this run needs "
                f"{needed} (workers x pool size + spare). Raise "
                "max_connections (PG_MAX_CONNECTIONS for the embedded server, which must then "
                "be restarted) or lower --workers / --pool-size."
            )
        return settings

    def close_database(self):
        if self.connection is not None:
            self.connection.close()
        if self.stopped_database:
            embedded.stop()

    def reset_reviews(self):
        if self.connection is not None:
            database.reset_reviews(self.connection)

    def settle_and_reset(self):
        """Empty review once the previous run's requests in flight have landed."""
        if self.connection is not None:
            database.settled_review_count(self.connection)
            database.reset_reviews(self.connection)

    # -- the ceiling ----------------------------------------------------------

    def measure_ceiling(self, settings, log):
        """pgbench per route, one client per wrk connection, as far as
        max_connections allows (the apps never hold more than their pools)."""
        options = self.options
        most = int(settings["max_connections"]) - SPARE_CONNECTIONS
        for connections in options.connections:
            clients = min(connections, most)
            for route in options.routes:
                self.progress.step(
                    f"pgbench {ROUTES[route].label} SQL, {clients} clients", options.duration
                )
                result = pgbench.run(
                    self.database_url,
                    route,
                    clients,
                    options.threads,
                    options.duration,
                    pin=self.cpus("load"),
                    log=log,
                )
                self.reset_reviews()
                self.ceiling.append({"route": route, "connections": connections, **result})

    # -- the apps -------------------------------------------------------------

    def start(self, app, deployment, log):
        """(process or None, base URL, description) of the server to measure."""
        options = self.options
        if options.target:
            return (
                None,
                options.target,
                {
                    "server_command": f"already running at {options.target}",
                    "workers": None,
                    "pool_size": None,
                    "settings": {},
                },
            )
        settings = deployments.settings(
            deployment, app, self.app_cores(), options.workers, options.pool_size
        )
        settings.update(options.env)
        try:
            port = free_port(options.port)
        except PortTaken as error:
            raise BenchmarkError(str(error)) from None
        url = f"http://127.0.0.1:{port}"
        app_log = self.results_dir / f"{self.stamp}-{app}-{deployment}.log"
        with open(app_log, "w") as app_output, pinned(self.cpus("app")):
            process = start_app(app, port, self.database_url, log=app_output, **settings)
        try:
            wait_healthy(process, url, timeout=60)
        except RuntimeError as error:
            stop(process)
            say(f"  {app} did not start; the end of its log:\n{log_tail(app_log)}")
            shown = os.path.relpath(app_log)
            raise AppFailed(f"did not start: {error} (its log: {shown})") from None
        description = {
            "server_command": server_command(process.pid),
            "workers": int(settings["WEB_WORKERS"]),
            "pool_size": options.pool_size,
            "settings": settings,
            "log": str(app_log.relative_to(ROOT)) if app_log.is_relative_to(ROOT) else None,
        }
        return process, url, description

    def verify(self, url):
        problems = verify.verify_health(url)
        if problems:
            raise AppFailed("not serving: " + "; ".join(problems))
        for route in self.options.routes:
            problems += verify.verify_route(url, ROUTES[route], self.connection)
        self.reset_reviews()
        if problems:
            raise AppFailed("failed verification: " + "; ".join(problems))

    def measure_route(self, app, deployment, url, route, connections, log):
        options = self.options

        def wrk_command(seconds):
            return wrk.command(
                url,
                route,
                connections,
                options.threads,
                seconds,
                options.timeout,
                self.cpus("load"),
            )

        reports, ledgers = [], []
        for index in range(options.repeat):
            label = f"{app} ({deployment}) {route.label}, {connections} connections"
            if options.repeat > 1:
                label += f", run {index + 1}/{options.repeat}"
            self.progress.step(label, options.duration + options.warmup)
            if options.warmup:
                wrk.run(wrk_command(options.warmup), log)
            self.settle_and_reset()
            args = wrk_command(options.duration)
            result = wrk.run(args, log)
            result["command"] = " ".join(args)
            reports.append(result)
            if route.key == "review" and self.connection is not None:
                rows = database.settled_review_count(self.connection)
                ledger = database.check_nothing_lost(result["ok"], rows, connections)
                ledgers.append(ledger.as_dict())
            self.reset_reviews()
        summary = wrk.summarize(reports)
        say(f"    {report.requests_cell(summary)} req/s, p99 {summary['latency_ms']['p99']:.1f} ms")
        ledger = None
        if ledgers:
            ledger = {
                key: sum(item[key] for item in ledgers)
                for key in ("responses_2xx", "rows_added", "in_flight")
            }
        return {
            "app": app,
            "deployment": deployment,
            "connections": connections,
            "route": route.key,
            "summary": summary,
            "runs": reports,
            "ledger": ledger,
            "ledgers": ledgers,
        }

    def measure_app(self, app, deployment, log):
        say(f"{app} ({deployment} deployment)")
        record = {"app": app, "deployment": deployment, "versions": environment.stack_versions(app)}
        if deployment in deployments.NOTES:
            record["note"] = deployments.NOTES[deployment]
        process = None
        try:
            process, url, description = self.start(app, deployment, log)
            record.update(description)
            self.verify(url)
            measured = []
            for connections in self.options.connections:
                for key in self.options.routes:
                    measured.append(
                        self.measure_route(app, deployment, url, ROUTES[key], connections, log)
                    )
            self.measurements += measured
            record["status"] = "measured"
        except AppFailed as error:
            say(f"  {app} is not measured: {error}")
            record.update(status="failed", reason=str(error))
        except (wrk.WrkError, database.LostWrites) as error:
            say(f"  {app} FAILED: {error}")
            record.update(status="failed", reason=f"{type(error).__name__}: {error}")
        finally:
            if process is not None:
                stop(process)
            self.apps.append(record)

    # -- the whole run --------------------------------------------------------

    def results(self, settings):
        options = self.options
        return {
            "schema": 1,
            "command": options.command,
            "environment": environment.capture(),
            "database": settings,
            "wrk": {
                "threads": options.threads,
                "connections": options.connections,
                "duration_s": options.duration,
                "warmup_s": options.warmup,
                "timeout_s": options.timeout,
                "repeat": options.repeat,
                "routes": options.routes,
            },
            "pinning": options.pin,
            "pgbench": self.ceiling,
            "apps": self.apps,
            "measurements": self.measurements,
        }

    def save(self, results):
        base = self.results_dir / f"{self.stamp}-{'-'.join(self.options.apps)}"
        paths = [base.with_suffix(".json"), base.with_suffix(".md"), base.with_suffix(".png")]
        paths[0].write_text(json.dumps(results, indent=2) + "\n")
        text = report.markdown(results)
        paths[1].write_text(text)
        if not chart.draw(results, paths[2]):
            paths.pop()  # nothing measured, nothing to draw
        say("\n" + text)
        for path in paths:
            say(f"saved {os.path.relpath(path)}")
        return results


def run(options):
    """Run the whole benchmark; returns the results as saved."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    bench = Benchmark(options, stamp)
    bench.results_dir.mkdir(parents=True, exist_ok=True)
    restore_database = lambda: None  # noqa: E731
    try:
        with open(bench.log_path, "w") as log:
            settings = bench.open_database()
            if options.pin and not options.target:
                restore_database = pin_database(options.pin["db"])
            if options.pgbench and bench.database_url:
                bench.measure_ceiling(settings, log)
            for deployment in options.deployments:
                for app in options.apps:
                    bench.measure_app(app, deployment, log)
        results = bench.save(bench.results(settings))
    finally:
        restore_database()
        bench.close_database()
    failed = [app for app in bench.apps if app["status"] != "measured"]
    if failed:
        raise BenchmarkError(
            "not measured: " + ", ".join(f"{a['app']} ({a['deployment']})" for a in failed)
        )
    return results
