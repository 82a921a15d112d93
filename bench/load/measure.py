"""One measured run of one app on one route, closed loop (wrk) or open loop
(bench/load/openloop): the warm-up, the run, what the app held of the database
meanwhile, and the books of a POST."""

import contextlib
from collections.abc import Callable
from typing import NamedTuple

from bench.sut import cost, database, memory
from bench.sut.processes import shown


class Generator(NamedTuple):
    """A load generator for one app and route: command(seconds) -> argv;
    run(argv, log) -> its report (with "ok" and "non_2xx"); unanswered(report)
    -> how many requests may have been written without their answer read."""

    command: Callable[[float], list]
    run: Callable[..., dict]
    unanswered: Callable[[dict], int]


def measure_once(target, route, db, runs, log, generator, sampler=None):
    """The run's report, with:
    - connections_held: the most connections the app held (pg_stat_activity);
    - pss_mib: the app's memory at the end of the run (bench/sut/memory.py;
      None for a server started elsewhere);
    - round_trips_per_request: through a delay proxy, the writes the app sent
      Postgres per answered request (each waits for its answer: a round trip);
    - cpu: the CPU each part spent over the run (bench/sut/cost.py: the
      target's parts, Postgres, the generator), against the machine's;
    - upstream: with rating sources (target.fan_out), what their service
      spent meanwhile (its GET /stats read around the run): CPU microseconds
      per answered request, its share of one core, the seconds it saturated,
      the most ratings asked for at once and connections open at once;
    - sampled: with a sampler (bench/sut/sampler.py Sampled, --profile), its
      result: the app's stacks over the run; its own CPU is the part "profiler";
    - ledger: a POST run's books (reviews the run's film gained against 2xx
      answers), those reviews then removed. Every POST run starts from no
      review of the run's film: the last run's (and the warm-up's) removed."""
    if runs.warmup:
        generator.run(generator.command(runs.warmup), log)
        if route.body:
            db.clear(settle=True)  # the warm-up's last writes land before the run's books open
    before = target.delay_proxy.counts() if target.delay_proxy else None
    upstream = target.fan_out.upstream if getattr(target, "fan_out", None) else None
    stats_before = upstream.stats() if upstream else None
    args = generator.command(runs.duration)
    with contextlib.ExitStack() as sampling:
        # The sampler runs around the window, so that its processes are there
        # at both ends of it: their CPU is theirs, not the harness's.
        sampled = sampler and sampling.enter_context(sampler)
        parts = {**target.parts, "postgres": [db.postmaster], **(sampled.parts if sampled else {})}
        with database.ConnectionsHeld(db.url, target.application_name) as held:
            with cost.Window(parts) as window:
                result = generator.run(args, log)
    answered = result["ok"] + result["non_2xx"]
    result["cpu"] = window.accounting(answered)
    if sampled:
        result["sampled"] = sampled.result()
    if upstream:
        result["upstream"] = upstream_spent(stats_before, upstream.stats(), result)
    result["pss_mib"] = memory.pss_mib(*target.pids)  # before the books: the run's end
    result["command"] = shown(args)
    result["connections_held"] = held.most
    if before:
        writes = target.delay_proxy.counts()["writes"] - before["writes"]
        result["round_trips_per_request"] = writes / answered if answered else None
    if route.body and db.film is not None:
        # A request the generator gave up on may still be written: wait for
        # the table to settle then. When every request was answered, every
        # write is in (an app answers a POST once its row is committed).
        unanswered = generator.unanswered(result)
        rows = db.count(settle=unanswered > 0)
        result["ledger"] = database.check_nothing_lost(result["ok"], rows, unanswered).as_dict()
        db.clear()
    return result


def upstream_spent(before, after, result):
    """What the rating service spent over a run, from its /stats before and after."""
    cpu = after["cpu_seconds"] - before["cpu_seconds"]
    answered = result["ok"] + result["non_2xx"]
    return {
        "cpu_us_per_request": cpu / answered * 1e6 if answered else None,
        "cpu_share": cpu / result["duration_s"] if result.get("duration_s") else None,
        "ratings": after["answered"] - before["answered"],
        "saturated_s": after["saturated_seconds"] - before["saturated_seconds"],
        "most_in_flight": after["peak_in_flight"],  # since the read before the run
        "most_connections": after["peak_connections"],
    }
