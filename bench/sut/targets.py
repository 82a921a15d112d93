"""What a run measures: each Slot of the lineup (bench/sut/lineup.py) at
each database delay, started under its server (or a server already running,
with --target), verified before it is measured, and described for the
results."""

import os
from dataclasses import dataclass, field

from bench.errors import AppFailed
from bench.records import AppRun
from bench.sut import (
    database,
    deployments,
    environment,
    pgbouncer,
    readback,
    replicas,
    verify,
)
from bench.sut.delay_proxy import Launched
from bench.sut.lineup import Slot
from bench.sut.processes import free_port, pinned
from bench.sut.servers import PRODUCTION, SERVERS
from infra import apps
from tools import ROOT, proxy
from tools.serve import AppNotStarted, running

EXTERNAL = "external"  # the deployment of a server started elsewhere (--target)


@dataclass
class Target:
    """One Slot of the lineup (bench/sut/lineup.py) at one database delay,
    as it runs: where it answers, and its results record (status
    "measured", or "failed" with the reason)."""

    app: str
    deployment: str  # the Slot's deployment's label: a name in reports, never parsed
    db_delay: float = 0.0  # seconds added to each round trip to Postgres (--db-delay)
    url: str | None = None
    record: AppRun | None = None
    delay_proxy: object = None  # the delay proxy in front of its database (a Launched)
    pids: list = field(default_factory=list)  # each copy's server's main process
    slot: Slot | None = None  # None: a server already running (--target)
    log_path: object = None  # its server's log
    # The processes of each part that serves it, by part (bench/sut/cost.py
    # PARTS): "app", "delay_proxy", "pgbouncer", "nginx"... Postgres is the run's.
    parts: dict = field(default_factory=dict)
    fan_out: object = None  # its rating sources (bench/sut/sources.py FanOut), or None

    @property
    def condition(self):
        """The fan-out fields of its records: sources per request and their delay."""
        if self.fan_out is None:
            return {}
        return {"fan_out": self.fan_out.count, "upstream_delay": self.fan_out.delay_text}

    @property
    def pid(self):
        """The first copy's server's main process (read back; memory reads them all)."""
        return self.pids[0] if self.pids else None

    @property
    def shape(self):
        return self.slot.shape

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


def new_target(slot, db_delay=0.0, fan_out=None):
    """The Target of slot at db_delay (with its rating sources: fan_out), its
    record stating what is asked."""
    deployment = slot.deployment
    record = AppRun(
        slot.name,
        deployment.label,
        "measured",
        versions=environment.stack_versions(slot.app, slot.server),
        server=slot.server,
        db_delay_ms=db_delay * 1000,
        configuration=deployment.configuration,
        replicas=deployment.copies,
    )
    if deployment.configuration in deployments.NOTES:
        record.note = deployments.NOTES[deployment.configuration]
    elif slot.server in SERVERS:
        record.note = f"{slot.server}: {SERVERS[slot.server].note}."
    if deployment.nginx:
        record.proxy = proxy.version()
    if deployment.door:
        record.proxy += f", {proxy.BENCH_DOOR_NOTE}"
    target = Target(slot.name, deployment.label, db_delay, record=record, slot=slot)
    target.fan_out = fan_out
    for name, value in target.condition.items():
        setattr(record, name, value)
    if fan_out:
        record.calls_out = apps.get(slot.app).fan_out  # its app.toml's (infra/apps.py)
    return target


def external(sut):
    """The server --target names, already running: nothing to start."""
    record = AppRun(
        sut.apps[0],
        EXTERNAL,
        "measured",
        versions=environment.stack_versions(sut.apps[0], None),
        configuration=EXTERNAL,
        server_command=f"already running at {sut.target}",
    )
    return Target(sut.apps[0], EXTERNAL, url=sut.target, record=record)


def app_database(exits, sut, target, database_url, log_path):
    """The URL target's app connects to, its connections named after it: through
    a delay proxy of its own (--db-delay) and a PgBouncer of its own
    (--pgbouncer, its pool at Postgres the app's budget of connections), both
    stopped when exits close. PgBouncer sits beside the app (app ->
    PgBouncer -> delay proxy -> Postgres), as on the app's host in production,
    so that each of the app's round trips still pays the delay."""
    database_url = database.named(database_url, target.application_name)
    if target.db_delay:
        proxy_log = exits.enter_context(open(log_path.with_suffix(".proxy.log"), "w"))
        launched = Launched(database_url, target.db_delay, proxy_log, sut.db_cpus)
        target.delay_proxy = exits.enter_context(launched)
        target.parts["delay_proxy"] = [target.delay_proxy.process.pid]
        database_url = target.delay_proxy.url
    slot = target.slot
    if slot.pgbouncer:
        bouncer_log = exits.enter_context(open(log_path.with_suffix(".pgbouncer.log"), "w"))
        bouncer = pgbouncer.Bouncer(database_url, bouncer_log, slot.connections)
        database_url = exits.enter_context(bouncer).url
        target.parts["pgbouncer"] = [bouncer.process.pid]
        target.record.pgbouncer = f"{pgbouncer.version()}, a transaction pool of {slot.connections}"
    return database_url


def start(exits, sut, target, database_url, log_dir, stamp):
    """Start target's Slot (sut: bench/options.py SUT, for its port, CPUs
    and the proxies' CPUs), stopped when exits close, in as many copies as its
    deployment names (bench/sut/replicas.py); on failure the target is
    marked failed and the run goes on."""
    slot = target.slot
    copies = slot.deployment.copies
    delay = f"-db{target.db_delay * 1000:g}ms" if target.db_delay else ""
    if target.fan_out:
        delay += f"-fan{target.fan_out.count}-{target.fan_out.delay_text.replace('~', 'j')}"
    settings = {**slot.settings, **(target.fan_out.settings() if target.fan_out else {})}
    shown_name = target.deployment.replace(" ", "-")
    log_path = log_dir / f"{stamp}-{target.app}-{shown_name}{delay}.log"

    def launch(port, path):
        command = (
            None
            if slot.server == PRODUCTION
            else SERVERS[slot.server].command(slot.app, "127.0.0.1", port, slot.shape)
        )
        return running(slot.app, port, database_url, path, 60, command, **settings)

    try:
        database_url = app_database(exits, sut, target, database_url, log_path)
        with pinned(sut.cpus):
            servers = replicas.start(exits, copies, free_port(sut.port), log_path, launch)
    except (AppNotStarted, pgbouncer.BouncerNotStarted) as error:
        print(f"  {error}", flush=True)
        shown = os.path.relpath(log_path)
        target.fail(f"did not start: {str(error).splitlines()[0]} (its log: {shown})")
        return
    target.url = servers[0].url
    target.pids = [server.process.pid for server in servers]
    target.parts["app"] = target.pids
    if target.fan_out:  # the rating service, its CPU charged to this app's runs alone
        target.parts["upstream"] = [target.fan_out.upstream.process.pid]
    if slot.deployment.nginx:
        door = proxy.BENCH_DOOR if slot.deployment.door else None
        with open(log_path.with_suffix(".nginx.log"), "w") as log:
            ports = replicas.ports(servers)
            limit = slot.shape.in_flight() if slot.deployment.limit else None
            handle = exits.enter_context(proxy.proxied(ports, free_port(), log, door, limit))
        if limit:  # read back from the config nginx runs
            target.record.proxy += f", refusing past max_conns={proxy.max_conns(handle)} per copy"
        target.parts["nginx"] = [handle.process.pid]
        target.url = handle.url
    record, shape = target.record, slot.shape
    record.server_command = replicas.command_line(servers)
    record.workers, record.threads = shape.processes, shape.threads  # until read back
    record.db_connections, record.pool_size = slot.connections, shape.pool
    record.settings = settings
    # All copies; behind PgBouncer, its pool bounds them.
    record.in_flight = min(shape.in_flight() * copies, slot.connections)
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


def check(target, routes, connection, token_file=None):
    """Verify before measuring: a target that fails is marked, not measured.
    Writes carry the door's token when the run has one (token_file)."""
    problems = verify.verify_health(target.url)
    if problems:
        raise AppFailed("not serving: " + "; ".join(problems))
    for route in routes:
        problems += verify.verify_route(target.url, route, connection, token_file)
    if problems:
        raise AppFailed("failed verification: " + "; ".join(problems))


def verified(targets, routes, db, runs=None):
    """The targets fit to measure; the others are marked failed. The reviews
    verification wrote (to the run's film) are removed after each. Its writes
    carry runs' write token (--write-token-file), as the measured runs' do."""
    token_file = runs.write_token_file if runs else None
    for target in targets:
        if not target.measurable:
            continue
        try:
            check(target, routes, db.connection, token_file)
        except AppFailed as error:
            print(f"  {target.label} is not measured: {error}", flush=True)
            target.fail(str(error))
        db.clear()
    return [target for target in targets if target.measurable]
