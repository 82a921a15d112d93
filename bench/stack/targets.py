"""What a run measures: each app in each deployment, started under its
production server (or a server already running, with --target), verified
before it is measured, and described for the results."""

import os
from dataclasses import dataclass

from bench.errors import AppFailed
from bench.records import AppRun
from bench.stack import database, deployments, environment, production, replicas, verify
from bench.stack.delay_proxy import Launched
from bench.stack.processes import cpu_set, free_port, pinned
from bench.stack.servers import ENTRY, PRODUCTION, SERVERS
from tools import ROOT, proxy
from tools.serve import AppNotStarted, running

EXTERNAL = "external"  # the deployment of a server started elsewhere (--target)


@dataclass
class Target:
    """One app in one deployment: where it answers, and its results record
    (status "measured", or "failed" with the reason)."""

    app: str
    deployment: str  # article, tuned, or a server's name (--server)
    db_delay: float = 0.0  # seconds added to each round trip to Postgres (--db-delay)
    url: str | None = None
    record: AppRun | None = None
    proxy: object = None  # the delay proxy in front of its database (a Launched)

    @property
    def label(self):
        return f"{self.app} ({self.deployment})"

    @property
    def application_name(self):
        """Its connections' name in pg_stat_activity."""
        return f"bench {self.app} {self.deployment} {self.db_delay * 1000:g}ms"

    @property
    def measurable(self):
        return self.record.status == "measured"

    def fail(self, reason):
        self.record.status, self.record.reason = "failed", reason


def app_cores(options):
    """The app's CPU budget: the cores --pin gives it, else all."""
    return len(cpu_set(options.pin["app"])) if options.pin else os.cpu_count()


def app_settings(options, app, deployment):
    """The environment app's serve.sh gets in this deployment."""
    settings = deployments.settings(
        deployment, app, app_cores(options), options.workers, options.pool_size
    )
    return {**settings, **options.env}


def fits(app, deployment):
    """Whether app can run in deployment (a server serves one interface)."""
    server = deployments.server_for(deployment, app)
    return server == PRODUCTION or SERVERS[server].interface == ENTRY[app][0]


def variants(options):
    """The deployments of the run, with nginx in front too or instead (--proxy),
    each at every replica count (--replicas; copies are behind nginx anyway,
    so "tuned" and "tuned+nginx" at 2 copies are one "tuned x2")."""
    suffixes = {"off": [""], "on": [deployments.BEHIND_NGINX]}
    suffixes["both"] = suffixes["off"] + suffixes["on"]
    named = [d + suffix for d in options.deployments for suffix in suffixes[options.proxy]]
    return list(
        dict.fromkeys(deployments.replicated(d, n) for d in named for n in options.replicas)
    )


def pairs(options):
    """(app, deployment) of every target the run starts, deployment-major."""
    return [
        (app, deployment)
        for deployment in variants(options)
        for app in options.apps
        if fits(app, deployment)
    ]


def packages_needed(options):
    """The distributions of every server the run starts other than serve.sh."""
    names = {deployments.server_for(d, app) for app, d in pairs(options)} - {PRODUCTION}
    return sorted({package for name in names for package in SERVERS[name].packages})


def connections_needed(options):
    """Every pool of every copy of every app started at once, full: copies x
    workers x pool size."""
    needed = 0
    for app, deployment in pairs(options):
        copies = deployments.replicas(deployment)
        settings = replicas.split(app_settings(options, app, deployment), copies)
        needed += copies * int(settings["WEB_WORKERS"]) * int(settings["POOL_MAX_SIZE"])
    return needed


def new_target(app, deployment, db_delay=0.0):
    server = None if deployment == EXTERNAL else deployments.server_for(deployment, app)
    record = AppRun(
        app,
        deployment,
        "measured",
        versions=environment.stack_versions(app, server),
        server=server,
        db_delay_ms=db_delay * 1000,
    )
    if deployments.base(deployment) in deployments.NOTES:
        record.note = deployments.NOTES[deployments.base(deployment)]
    elif server in SERVERS:
        record.note = f"{server}: {SERVERS[server].note}."
    if deployments.behind_nginx(deployment):
        record.proxy = proxy.version()
    return Target(app, deployment, db_delay, record=record)


def external(options):
    """The server --target names, already running: nothing to start."""
    target = new_target(options.apps[0], EXTERNAL)
    target.url = options.target
    target.record.server_command = f"already running at {options.target}"
    return target


def argv(name, app, port, cores, workers):
    """The command line of server `name` for app on port; None for serve.sh."""
    return (
        None
        if name == PRODUCTION
        else SERVERS[name].command(app, "127.0.0.1", port, cores, workers)
    )


def start(stack, options, target, database_url, log_dir, stamp):
    """Start target's app inside stack (stopped when the stack closes), in as
    many copies as its deployment names (bench/stack/replicas.py); on failure
    the target is marked failed and the run goes on."""
    copies = deployments.replicas(target.deployment)
    settings = replicas.split(app_settings(options, target.app, target.deployment), copies)
    delay = f"-db{target.db_delay * 1000:g}ms" if target.db_delay else ""
    shown_name = target.deployment.replace(" ", "-")
    log_path = log_dir / f"{stamp}-{target.app}-{shown_name}{delay}.log"
    port = free_port(options.port)
    name = target.record.server
    workers = int(settings["WEB_WORKERS"])
    threads = None
    in_flight = workers if production.read(target.app).holds_thread else None
    if name != PRODUCTION:
        server = SERVERS[name]
        threads = server.budget(app_cores(options), workers)[1]
        in_flight = server.in_flight(app_cores(options), workers)
    database_url = database.named(database_url, target.application_name)
    if target.db_delay:
        proxy_log = stack.enter_context(open(log_path.with_suffix(".proxy.log"), "w"))
        pin = options.pin and options.pin["db"]
        target.proxy = stack.enter_context(Launched(database_url, target.db_delay, proxy_log, pin))
        database_url = target.proxy.url

    def launch(port, path):
        command = argv(name, target.app, port, app_cores(options), workers)
        return running(target.app, port, database_url, path, 60, command, **settings)

    try:
        with pinned(options.pin and options.pin["app"]):
            servers = replicas.start(stack, copies, port, log_path, launch)
    except AppNotStarted as error:
        print(f"  {error}", flush=True)
        shown = os.path.relpath(log_path)
        target.fail(f"did not start: {str(error).splitlines()[0]} (its log: {shown})")
        return
    target.url = servers[0].url
    if deployments.behind_nginx(target.deployment):
        nginx_port = free_port()
        with open(log_path.with_suffix(".nginx.log"), "w") as log:
            stack.enter_context(proxy.proxied(replicas.ports(servers), nginx_port, log))
        target.url = f"http://127.0.0.1:{nginx_port}"
    record = target.record
    record.server_command, record.replicas = replicas.command_line(servers), copies
    record.workers, record.threads = workers, threads
    record.in_flight = in_flight and in_flight * copies
    record.pool_size, record.settings = int(settings["POOL_MAX_SIZE"]), settings
    record.log = str(log_path.relative_to(ROOT)) if log_path.is_relative_to(ROOT) else None


def check(target, routes, connection):
    """Verify before measuring: a target that fails is marked, not measured."""
    problems = verify.verify_health(target.url)
    if problems:
        raise AppFailed("not serving: " + "; ".join(problems))
    for route in routes:
        problems += verify.verify_route(target.url, route, connection)
    if problems:
        raise AppFailed("failed verification: " + "; ".join(problems))


def verified(targets, routes, connection, reset):
    """The targets fit to measure; the others are marked failed."""
    for target in targets:
        if not target.measurable:
            continue
        try:
            check(target, routes, connection)
        except AppFailed as error:
            print(f"  {target.label} is not measured: {error}", flush=True)
            target.fail(str(error))
        reset()
    return [target for target in targets if target.measurable]
