"""The lineup: what a run starts, resolved once from its options into typed
values, and read by everything after (the start, the plan, the budget's
check, the records). Nothing derives it again: a label such as "tuned x2" is
made from a Deployment for display and never parsed back.

A Deployment is how every app of the run is deployed: a configuration (a
deployment of bench/stack/deployments.py: article, tuned, a --tune
candidate; or a server's name, bench/stack/servers.py), with nginx in front
or not (--proxy), in one or more copies behind nginx (--replicas). A Slot is
one app in one Deployment: the server it runs under, the Shape of each copy
under the app's connection budget, and the environment its server gets.
"""

import os
from dataclasses import dataclass

from bench.stack import deployments
from bench.stack.budget import Shape
from bench.stack.processes import cpu_set
from bench.stack.servers import PRODUCTION, SERVERS
from infra import apps


@dataclass(frozen=True)
class Deployment:
    configuration: str  # article, tuned, a --tune candidate, or a server's name
    nginx: bool = False  # nginx in front (copies are always behind it)
    copies: int = 1

    @property
    def label(self):
        """Its name in reports: "tuned", "tuned+nginx", "tuned x2"."""
        if self.copies > 1:
            return f"{self.configuration} x{self.copies}"
        return self.configuration + ("+nginx" if self.nginx else "")


@dataclass(frozen=True)
class Slot:
    """One app in one Deployment, as it is started."""

    app: str
    deployment: Deployment
    server: str  # PRODUCTION (its serve.sh) or a bench/stack/servers.py name
    shape: Shape  # each copy's
    settings: dict  # the environment its server gets
    connections: int  # the app's budget at Postgres, all copies
    pgbouncer: bool = False  # behind a PgBouncer of its own, pooling `connections`

    @property
    def label(self):
        return f"{self.app} ({self.deployment.label})"

    @property
    def holds(self):
        """The most connections it can hold at Postgres: its PgBouncer's pool,
        or every copy's pools full."""
        if self.pgbouncer:
            return self.connections
        return self.deployment.copies * self.shape.connections


def app_cores(stack):
    """The app's CPU budget: the cores --pin gives it, else all."""
    return len(cpu_set(stack.cpus)) if stack.cpus else os.cpu_count()


def variants(stack):
    """The Deployments of the run: each deployment asked, with nginx in front
    too or instead (--proxy), at every replica count (--replicas; copies are
    behind nginx anyway, so "tuned" and "tuned+nginx" at 2 copies are one)."""
    nginx = {"off": [False], "on": [True], "both": [False, True]}[stack.proxy]
    found = [
        Deployment(name, behind or copies > 1, copies)
        for name in stack.deployments
        for behind in nginx
        for copies in stack.replicas
    ]
    return list(dict.fromkeys(found))


def fits(app, configuration):
    """Whether app can run in configuration (a server serves one interface)."""
    if not deployments.serves(configuration, app):
        return False
    server = deployments.server_for(configuration, app)
    return server == PRODUCTION or SERVERS[server].interface == apps.get(app).interface


def slot(stack, app, deployment, connections):
    """app in deployment under a budget of connections (raises NoThreads for
    --worker-threads on a server without threads)."""
    name = deployment.configuration
    shape = deployments.shape(
        name,
        app,
        app_cores(stack),
        connections,
        stack.workers,
        stack.worker_threads,
        bounced=stack.pgbouncer,
        copies=deployment.copies,
    )
    settings = deployments.settings(name, app, shape)
    for key, value in stack.env.items():  # --env's over the deployment's
        joined = key == "GUNICORN_CMD_ARGS" and key in settings
        settings[key] = f"{settings[key]} {value}" if joined else value
    if stack.pgbouncer:  # no session state may outlive a transaction: not --env's to undo
        settings["TRANSACTION_POOLING"] = "1"
    server = deployments.server_for(name, app)
    return Slot(app, deployment, server, shape, settings, connections, stack.pgbouncer)


def lineup(stack, connections):
    """Every Slot the run starts, deployment-major, each app under a budget of
    connections: the one place a run's targets are worked out."""
    return [
        slot(stack, app, deployment, connections)
        for deployment in variants(stack)
        for app in stack.apps
        if fits(app, deployment.configuration)
    ]


def connections_needed(slots):
    """What every app started at once holds at Postgres, full."""
    return sum(slot.holds for slot in slots)


def packages_needed(slots):
    """The distributions of every server the run starts other than serve.sh."""
    names = {slot.server for slot in slots} - {PRODUCTION}
    return sorted({package for name in names for package in SERVERS[name].packages})
