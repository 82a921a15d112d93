"""What a view selects from a run's records, shared by the modes' sections
(bench/modes/) and the charts (bench/report/charts/): each app at its best per
condition, and the layout of a server matrix."""

from bench.report.tables import delays
from bench.stack.servers import is_server


def best(results, route):
    """{(app, delay ms, connections): its Peak with the most req/s on route,
    over every deployment (configuration) the run measured for the app}:
    the decision compares each app at its best, with that same run's p99."""
    winners = {}
    for peak in results.measurements:
        if peak.route != route:
            continue
        key = (peak.app, peak.db_delay_ms, peak.connections)
        if key not in winners or (
            peak.summary.requests_per_s > winners[key].summary.requests_per_s
        ):
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
