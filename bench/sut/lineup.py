"""The lineup: what a run starts, resolved once from its options into typed
values, and read by everything after (the start, the plan, the budget's
check, the records). Nothing derives it again: a label such as "tuned x2" is
made from a Deployment for display and never parsed back.

A Deployment is how every app of the run is deployed: a configuration (a
deployment of bench/sut/deployments.py: article, tuned, a --tune
candidate; or a server's name, bench/sut/servers.py), with nginx in front
or not (--proxy; with the door's rules or not: --proxy door; with its own
limit or not: --proxy limit), in one or
more copies behind nginx (--replicas). A Slot is
one app in one Deployment: the server it runs under, the Shape of each copy
under the app's connection budget, and the environment its server gets.
"""

import os
from dataclasses import dataclass

from bench.sut import deployments
from bench.sut.budget import Shape
from bench.sut.processes import cpu_set
from bench.sut.servers import PRODUCTION, SERVERS
from infra import apps


@dataclass(frozen=True)
class Deployment:
    configuration: str  # article, tuned, a --tune candidate, or a server's name
    nginx: bool = False  # nginx in front (copies are always behind it)
    copies: int = 1
    # nginx with the deployed door's rules (proxy/door.conf: limits, JSON
    # access log, TLS): what they cost over plain nginx (--proxy door)
    door: bool = False
    # nginx refusing past what each copy can work on at once (its upstream
    # server's max_conns: --proxy limit), 503 with Retry-After
    limit: bool = False

    @property
    def label(self):
        """Its name in reports: "tuned", "tuned+nginx", "tuned+door", "tuned x2"."""
        shown = self.configuration
        if self.copies > 1:
            shown += f" x{self.copies}"
        elif self.nginx:
            shown += "+door" if self.door else "+limit" if self.limit else "+nginx"
        return shown


@dataclass(frozen=True)
class Slot:
    """One app in one Deployment, as it is started."""

    app: str
    deployment: Deployment
    server: str  # PRODUCTION (its serve.sh) or a bench/sut/servers.py name
    shape: Shape  # each copy's
    settings: dict  # the environment its server gets
    connections: int  # the app's budget at Postgres, all copies
    pgbouncer: bool = False  # behind a PgBouncer of its own, pooling `connections`
    arm: int = 0  # the A/A control (an app named twice): 1 or 2; 0 for an app named once

    @property
    def name(self):
        """The app as the records and reports name it: "flask", or an A/A
        arm, "flask#1" and "flask#2" (the app itself is `app`, the registry's)."""
        return f"{self.app}#{self.arm}" if self.arm else self.app

    @property
    def label(self):
        return f"{self.name} ({self.deployment.label})"

    @property
    def holds(self):
        """The most connections it can hold at Postgres: its PgBouncer's pool,
        or every copy's pools full."""
        if self.pgbouncer:
            return self.connections
        return self.deployment.copies * self.shape.connections


def app_cores(sut):
    """The app's CPU budget: the cores --pin gives it, else all."""
    return len(cpu_set(sut.cpus)) if sut.cpus else os.cpu_count()


def variants(sut):
    """The Deployments of the run: each deployment asked, with nginx in front
    too or instead (--proxy), at every replica count (--replicas; copies are
    behind nginx anyway, so "tuned" and "tuned+nginx" at 2 copies are one).
    --proxy door: plain nginx and nginx with the door's rules, side by side;
    --proxy limit: plain nginx and nginx with its limit."""
    fronts = {  # (nginx, its door, its limit)
        "off": [(False, False, False)],
        "on": [(True, False, False)],
        "both": [(False, False, False), (True, False, False)],
        "door": [(True, False, False), (True, True, False)],
        "limit": [(True, False, False), (True, False, True)],
    }[sut.proxy]
    found = [
        Deployment(name, behind or copies > 1, copies, door and copies == 1, limit)
        for name in sut.deployments
        for behind, door, limit in fronts
        for copies in sut.replicas
    ]
    return list(dict.fromkeys(found))


def fits(app, configuration):
    """Whether app can run in configuration (a server serves one interface)."""
    if not deployments.serves(configuration, app):
        return False
    server = deployments.server_for(configuration, app)
    return server == PRODUCTION or SERVERS[server].interface == apps.get(app).interface


def slot(sut, app, deployment, connections, arm=0):
    """app in deployment under a budget of connections, as A/A arm `arm` (0:
    none); raises NoThreads for --worker-threads on a server without threads."""
    name = deployment.configuration
    shape = deployments.shape(
        name,
        app,
        app_cores(sut),
        connections,
        sut.workers,
        sut.worker_threads,
        bounced=sut.pgbouncer,
        copies=deployment.copies,
    )
    settings = deployments.settings(name, app, shape)
    for key, value in sut.env.items():  # --env's over the deployment's
        joined = key == "GUNICORN_CMD_ARGS" and key in settings
        settings[key] = f"{settings[key]} {value}" if joined else value
    if sut.pgbouncer:  # no session state may outlive a transaction: not --env's to undo
        settings["TRANSACTION_POOLING"] = "1"
    server = deployments.server_for(name, app)
    return Slot(app, deployment, server, shape, settings, connections, sut.pgbouncer, arm)


def arms(named):
    """[(app, arm)] of the apps named: an app named twice is the A/A control,
    the same app as two arms of one rotation, 1 and 2; once, arm 0."""
    seen = {}
    found = []
    for app in named:
        seen[app] = seen.get(app, 0) + 1
        found.append((app, seen[app] if named.count(app) > 1 else 0))
    return found


def lineup(sut, connections):
    """Every Slot the run starts, deployment-major, each app under a budget of
    connections: the one place a run's targets are worked out."""
    return [
        slot(sut, app, deployment, connections, arm)
        for deployment in variants(sut)
        for app, arm in arms(sut.apps)
        if fits(app, deployment.configuration)
    ]


def connections_needed(slots):
    """What every app started at once holds at Postgres, full."""
    return sum(slot.holds for slot in slots)


def tools_needed(slots, sut):
    """The system tools of what the run starts, by scripts/system.sh's names:
    nginx in front of a copy, PgBouncer beside an app, taskset to pin."""
    needs = {
        "nginx": any(slot.deployment.nginx for slot in slots),
        "pgbouncer": any(slot.pgbouncer for slot in slots),
        "taskset": bool(sut.cpus),
    }
    return [tool for tool, needed in needs.items() if needed]


def packages_needed(slots):
    """The distributions of every server the run starts other than serve.sh."""
    names = {slot.server for slot in slots} - {PRODUCTION}
    return sorted({package for name in names for package in SERVERS[name].packages})
