"""Where each app's CPU goes, by layer (--profile, with --rate): after the
open loop's runs, every app is offered the same rates again, in rotation,
while py-spy samples every process of its server (bench/sut/sampler.py).
Each sample is given a layer by the code it is in (bench/layers.py: the
server, the framework, the driver, the event loop, JSON, the app's own
code); the app's CPU per request (the part "app") is split into its user
share, shared out by the samples, and its system share, the kernel's. The
same rates unsampled (the open loop's Rates) are the control: what the
profiler cost the app, beside what it cost itself (the part "profiler")."""

import dataclasses
import os
from pathlib import Path

from bench import layers
from bench.load.measure import measure_once
from bench.modes import open_loop, peak
from bench.modes.mode import Mode
from bench.records import Profile
from bench.report.profile import section  # the mode's section: a view of its records
from bench.rotation import measure_in_rotation
from bench.sut import cost, readback, sampler
from bench.sut.sampler import Sampled

PTRACE_SCOPE = Path("/proc/sys/kernel/yama/ptrace_scope")


def refused(options):
    """Why its option cannot run with the others, or None."""
    if not options.profile:
        return None
    if not options.rates:
        return "--profile samples the apps at --rate's loads: give --rate too (e.g. --rate 300)"
    if options.target:
        return "--profile samples the processes a run starts: not a --target"
    if os.geteuid() != 0 and PTRACE_SCOPE.exists() and PTRACE_SCOPE.read_text().strip() != "0":
        return "--profile reads the apps' memory (py-spy, ptrace): run as root"
    return None


def steps(options, apps):
    """Its steps per database delay, for Progress: every rate on every route, again."""
    if not options.profile:
        return {}
    runs = apps * len(options.routes) * open_loop.rates_per_route(options)
    return {"profile": (runs, peak.run_seconds(options.runs))}


def measure_apps(stage, gathered):
    """The Profiles of every app, after the open loop's Rates (their control)."""
    if not stage.options.profile:
        return {}
    planned = open_loop.rounds(
        stage.options, gathered.get("measurements", []), stage.measured, stage.routes
    )
    done = measure_in_rotation(stage, [relabelled(each) for each in planned], measure, describe)
    kept = {(t.app, t.deployment) for t in stage.measured if t.measurable}
    return {
        "profiles": [
            record(target, step, report)
            for target, step, report, _, _ in done
            if (target.app, target.deployment) in kept
        ]
    }


def relabelled(steps):
    """A round of the open loop's, its steps counted as the profile's."""

    def step(target):
        found = steps(target)
        return found and dataclasses.replace(found, kind="profile")

    return step


def measure(target, step, context):
    """One open-loop run with the app's processes sampled; the worker pids
    (every copy's) kept with its report."""
    offered = open_loop.generator(target, step.route, step.rate, context.runs)
    sampled = Sampled(target.pids)
    runs = context.runs
    report = measure_once(target, step.route, context.db, runs, context.log, offered, sampled)
    report["workers"] = [pid for root in target.pids for pid in readback.worker_pids(root)]
    return report


def describe(report):
    sampled = report["sampled"]
    return (
        f"{open_loop.describe(report)}; {sampled['samples']:,} samples from "
        f"{sum(1 for p in sampled['processes'].values() if p['samples'])} processes"
    )


def record(target, step, report):
    sampled = report.pop("sampled")
    workers = report.pop("workers")
    parts = cost.per_request(report.get("cpu"))
    return Profile(
        app=target.app,
        deployment=target.deployment,
        db_delay_ms=target.db_delay * 1000,
        route=step.route.key,
        rate=step.rate,
        report=report,
        sampled=sampled,
        layers_us=layers.per_request(sampled, (parts or {}).get("app")),
        cpu_us_per_request=parts,
        workers=workers,
        **target.condition,
    )


def options(group):
    group.add_argument(
        "--profile",
        action="store_true",
        help="with --rate: then offer each app the same rates again with py-spy sampling "
        "every process of its server: where its CPU goes, by layer (server, framework, "
        "driver, event loop, JSON, its own code, the kernel), a flame graph per app "
        "(bench/modes/profile.py)",
    )


def extras(options):
    return [sampler.PROGRAM] if options.profile else []  # its sampler's distribution too


MODE = Mode(
    "profile",
    section,
    charts=(
        ("draw_layers", "-layers.png"),
        ("draw_flames", "-flame.svg"),
    ),
    title="where the CPU goes",
    options=options,
    fields=(("profile", bool, False),),
    refused=refused,
    extras=extras,
    steps=steps,
    measure_apps=measure_apps,
)
