"""What a run measures: each app in each deployment, started under its
production server (or a server already running, with --target), verified
before it is measured, and described for the results."""

import os
from dataclasses import dataclass, field

from bench.errors import AppFailed
from bench.records import AppRun
from bench.stack import (
    database,
    deployments,
    environment,
    pgbouncer,
    readback,
    replicas,
    verify,
)
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
    pids: list = field(default_factory=list)  # each copy's server's main process

    @property
    def pid(self):
        """The first copy's server's main process (read back; memory reads them all)."""
        return self.pids[0] if self.pids else None

    shape: object = None  # the Shape it runs in (bench/stack/budget.py)
    log_path: object = None  # its server's log

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


def app_cores(stack):
    """The app's CPU budget: the cores --pin gives it, else all."""
    return len(cpu_set(stack.cpus)) if stack.cpus else os.cpu_count()


def app_shape(stack, app, deployment, connections):
    """The Shape each copy of app runs in, in deployment, under a budget of
    connections for the app (all its copies: bench/stack/replicas.py)."""
    whole = deployments.shape(
        deployment,
        app,
        app_cores(stack),
        connections,
        stack.workers,
        stack.worker_threads,
        bounced=stack.pgbouncer,
    )
    return replicas.copy_shape(
        whole, deployments.replicas(deployment), connections, stack.pgbouncer
    )


def app_settings(stack, app, deployment, shape):
    """The environment app's serve.sh gets in this deployment: --env's over
    the deployment's, GUNICORN_CMD_ARGS joined to the threads it may carry."""
    settings = deployments.settings(deployment, app, shape)
    for name, value in stack.env.items():
        joined = name == "GUNICORN_CMD_ARGS" and name in settings
        settings[name] = f"{settings[name]} {value}" if joined else value
    if stack.pgbouncer:  # no session state may outlive a transaction: not --env's to undo
        settings["TRANSACTION_POOLING"] = "1"
    return settings


def fits(app, deployment):
    """Whether app can run in deployment (a server serves one interface)."""
    if not deployments.serves(deployment, app):
        return False
    server = deployments.server_for(deployment, app)
    return server == PRODUCTION or SERVERS[server].interface == ENTRY[app][0]


def variants(stack):
    """The deployments of the run, with nginx in front too or instead (--proxy),
    each at every replica count (--replicas; copies are behind nginx anyway,
    so "tuned" and "tuned+nginx" at 2 copies are one "tuned x2")."""
    suffixes = {"off": [""], "on": [deployments.BEHIND_NGINX]}
    suffixes["both"] = suffixes["off"] + suffixes["on"]
    named = [d + suffix for d in stack.deployments for suffix in suffixes[stack.proxy]]
    return list(dict.fromkeys(deployments.replicated(d, n) for d in named for n in stack.replicas))


def pairs(stack):
    """(app, deployment) of every target the run starts, deployment-major."""
    return [
        (app, deployment)
        for deployment in variants(stack)
        for app in stack.apps
        if fits(app, deployment)
    ]


def packages_needed(stack):
    """The distributions of every server the run starts other than serve.sh."""
    names = {deployments.server_for(d, app) for app, d in pairs(stack)} - {PRODUCTION}
    return sorted({package for name in names for package in SERVERS[name].packages})


def connections_needed(stack, connections):
    """Every pool of every app started at once, full, under a budget of
    connections per app; behind PgBouncer, what each app's PgBouncer holds
    (the apps' pools are its clients, not Postgres')."""
    if stack.pgbouncer:
        return connections * len(pairs(stack))
    return sum(
        deployments.replicas(deployment)
        * app_shape(stack, app, deployment, connections).connections
        for app, deployment in pairs(stack)
    )


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


def external(stack):
    """The server --target names, already running: nothing to start."""
    target = new_target(stack.apps[0], EXTERNAL)
    target.url = stack.target
    target.record.server_command = f"already running at {stack.target}"
    return target


def app_database(exits, stack, target, database_url, log_path, connections):
    """The URL target's app connects to, its connections named after it: through
    a delay proxy of its own (--db-delay) and a PgBouncer of its own
    (--pgbouncer, its pool at Postgres the app's budget of connections), both
    stopped when exits close. PgBouncer sits beside the app (app ->
    PgBouncer -> delay proxy -> Postgres), as on the app's host in production,
    so that each of the app's round trips still pays the delay."""
    database_url = database.named(database_url, target.application_name)
    if target.db_delay:
        proxy_log = exits.enter_context(open(log_path.with_suffix(".proxy.log"), "w"))
        launched = Launched(database_url, target.db_delay, proxy_log, stack.db_cpus)
        target.proxy = exits.enter_context(launched)
        database_url = target.proxy.url
    if stack.pgbouncer:
        bouncer_log = exits.enter_context(open(log_path.with_suffix(".pgbouncer.log"), "w"))
        bouncer = pgbouncer.Bouncer(database_url, bouncer_log, connections)
        database_url = exits.enter_context(bouncer).url
        target.record.pgbouncer = f"{pgbouncer.version()}, a transaction pool of {connections}"
    return database_url


def start(exits, stack, target, database_url, log_dir, stamp, connections):
    """Start target's app (stack: bench/options.py Stack), stopped when exits close, under a
    budget of connections, in as many copies as its deployment names
    (bench/stack/replicas.py); on failure the target is marked failed and the
    run goes on."""
    shape = app_shape(stack, target.app, target.deployment, connections)
    settings = app_settings(stack, target.app, target.deployment, shape)
    copies = deployments.replicas(target.deployment)
    delay = f"-db{target.db_delay * 1000:g}ms" if target.db_delay else ""
    shown_name = target.deployment.replace(" ", "-")
    log_path = log_dir / f"{stamp}-{target.app}-{shown_name}{delay}.log"
    name = target.record.server

    def launch(port, path):
        command = (
            None
            if name == PRODUCTION
            else SERVERS[name].command(target.app, "127.0.0.1", port, shape)
        )
        return running(target.app, port, database_url, path, 60, command, **settings)

    try:
        database_url = app_database(exits, stack, target, database_url, log_path, connections)
        with pinned(stack.cpus):
            servers = replicas.start(exits, copies, free_port(stack.port), log_path, launch)
    except (AppNotStarted, pgbouncer.BouncerNotStarted) as error:
        print(f"  {error}", flush=True)
        shown = os.path.relpath(log_path)
        target.fail(f"did not start: {str(error).splitlines()[0]} (its log: {shown})")
        return
    target.url, target.shape = servers[0].url, shape
    target.pids = [server.process.pid for server in servers]
    if deployments.behind_nginx(target.deployment):
        nginx_port = free_port()
        with open(log_path.with_suffix(".nginx.log"), "w") as log:
            exits.enter_context(proxy.proxied(replicas.ports(servers), nginx_port, log))
        target.url = f"http://127.0.0.1:{nginx_port}"
    record = target.record
    record.server_command, record.replicas = replicas.command_line(servers), copies
    record.workers, record.threads = shape.processes, shape.threads  # until read back
    record.db_connections, record.pool_size, record.settings = connections, shape.pool, settings
    # All copies; behind PgBouncer, its pool bounds them.
    record.in_flight = min(shape.in_flight() * copies, connections)
    record.log = str(log_path.relative_to(ROOT)) if log_path.is_relative_to(ROOT) else None
    target.log_path = log_path


def read_back(target):
    """Record the worker processes, their OS threads and the worker class that
    really ran, once measured (every worker up, and busy): say where they
    differ from the Shape asked for. The record keeps both."""
    record, shape = target.record, target.shape
    workers = readback.worker_pids(target.pid)
    record.workers = len(workers)
    record.os_threads = max((readback.os_threads(pid) for pid in workers), default=None)
    record.worker_class = readback.worker_class(target.log_path)
    differences = []
    if record.workers != shape.processes:
        differences.append(f"{record.workers} worker processes run, {shape.processes} asked")
    if record.worker_class == "gthread" and shape.threads == 1:
        differences.append("gunicorn runs gthread where 1 thread was asked (GUNICORN_CMD_ARGS?)")
    if record.worker_class == "sync" and shape.threads > 1:
        differences.append(f"gunicorn runs sync workers where {shape.threads} threads were asked")
    record.differs = "; ".join(differences) or None
    if record.differs:
        print(f"  {target.label}: {record.differs}", flush=True)


def read_back_all(targets):
    """read_back every target still running."""
    for target in targets:
        if target.measurable and target.pid:
            read_back(target)


def check(target, routes, connection):
    """Verify before measuring: a target that fails is marked, not measured."""
    problems = verify.verify_health(target.url)
    if problems:
        raise AppFailed("not serving: " + "; ".join(problems))
    for route in routes:
        problems += verify.verify_route(target.url, route, connection)
    if problems:
        raise AppFailed("failed verification: " + "; ".join(problems))


def verified(targets, routes, db):
    """The targets fit to measure; the others are marked failed. The reviews
    verification wrote (to the run's film) are removed after each."""
    for target in targets:
        if not target.measurable:
            continue
        try:
            check(target, routes, db.connection)
        except AppFailed as error:
            print(f"  {target.label} is not measured: {error}", flush=True)
            target.fail(str(error))
        db.clear()
    return [target for target in targets if target.measurable]
