"""One measured run of one app on one route, closed loop (wrk) or open loop
(bench/load/openloop): the warm-up, the run, what the app held of the database
meanwhile, and the books of a POST."""

from typing import NamedTuple

from bench.stack import database, memory
from bench.stack.processes import shown


class Generator(NamedTuple):
    """A load generator for one app and route: command(seconds) -> argv;
    run(argv, log) -> its report (with "ok" and "non_2xx"); unanswered(report)
    -> how many requests may have been written without their answer read."""

    command: object
    run: object
    unanswered: object


def measure_once(target, route, db, runs, log, generator):
    """The run's report, with:
    - connections_held: the most connections the app held (pg_stat_activity);
    - pss_mib: the app's memory at the end of the run (bench/stack/memory.py;
      None for a server started elsewhere);
    - round_trips_per_request: through a delay proxy, the writes the app sent
      Postgres per answered request (each waits for its answer: a round trip),
      and proxy_cpu_share: the share of one core the proxy used meanwhile;
    - ledger: a POST run's books (reviews the run's film gained against 2xx
      answers), those reviews then removed."""
    if runs.warmup:
        generator.run(generator.command(runs.warmup), log)
    if route.body:
        db.clear(settle=True)  # the warm-up's last writes land before the run's books open
    before = target.proxy.counts() if target.proxy else None
    cpu_before = target.proxy.cpu_seconds() if target.proxy else None
    args = generator.command(runs.duration)
    with database.ConnectionsHeld(db.url, target.application_name) as held:
        result = generator.run(args, log)
    result["pss_mib"] = memory.pss_mib(*target.pids)  # before the books: the run's end
    result["command"] = shown(args)
    result["connections_held"] = held.most
    if before:
        writes = target.proxy.counts()["writes"] - before["writes"]
        answered = result["ok"] + result["non_2xx"]
        result["round_trips_per_request"] = writes / answered if answered else None
        if cpu_before is not None:
            used = target.proxy.cpu_seconds() - cpu_before
            result["proxy_cpu_share"] = used / result["duration_s"]
    if route.body and db.film is not None:
        result["ledger"] = database.check_nothing_lost(
            result["ok"], db.count(), generator.unanswered(result)
        ).as_dict()
        db.clear()
    return result
