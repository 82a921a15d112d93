"""What a view selects from a run's records, shared by the modes' sections
(bench/modes/) and the charts (bench/report/charts/): each app at its best per
condition (by capacity at the objective when the run has it: --slo), and the
layout of a server matrix."""

from bench.report.tables import delays
from bench.sut.servers import is_server


def capacity_of(results, peak):
    """The capacity at the objective (--slo) found from a Peak: its
    capacity_rps ({"value", "ci95", "objective"}), or None."""
    where = (peak.app, peak.deployment, peak.db_delay_ms, peak.route, peak.connections)
    for found in results.capacity:
        if (
            found.app,
            found.deployment,
            found.db_delay_ms,
            found.route,
            found.connections,
        ) == where:
            return found.capacity_rps
    return None


def rank(results, peak):
    """What the best is chosen by: the capacity at the objective when the run
    found capacities (--slo), then req/s; else req/s."""
    found = capacity_of(results, peak) if results.capacity else None
    return (found["value"] if found else -1.0, peak.summary.requests_per_s)


def best(results, route):
    """{(app, delay ms, connections): its Peak with the most capacity at the
    objective (with --slo), else the most req/s, on route, over every
    deployment (configuration) the run measured for the app}: the decision
    compares each app at its best, with that same run's p99."""
    winners = {}
    for peak in results.measurements:
        if peak.route != route:
            continue
        key = (peak.app, peak.db_delay_ms, peak.connections)
        if peak.fan_out:  # the ratings route's conditions: bench/modes/fan_out.py
            continue
        if key not in winners or rank(results, peak) > rank(results, winners[key]):
            winners[key] = peak
    return winners


def layout(results):
    """(servers, apps, failed pairs) of a server-matrix run, else None."""
    servers = list(dict.fromkeys(peak.deployment for peak in results.measurements))
    if len(servers) < 2 or not all(map(is_server, servers)) or len(delays(results)) > 1:
        return None
    apps = list(dict.fromkeys(app.app for app in results.apps))
    failed = {(a.app, a.deployment) for a in results.apps if a.reason}
    return servers, apps, failed
