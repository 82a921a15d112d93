"""The ratings route's sweep (--fan-out N,... x --upstream-delay D,...): where
async should win, a request that waits on other services. Each app asks N
rating sources (the project's upstream/, started by the run) per request,
each answering D later: Flask and Falcon one after another, Quart, Sanic
and the flask_threads variant all at once (each app's app.toml: fan_out).
Its section: each app per condition and connection count, its req/s, p99,
memory, the bound its concurrency sets and how far it reached it, and what
the rating service spent (which must never be the bottleneck)."""

import contextlib

from bench.modes.mode import Mode, one_condition, sweeps_nothing
from bench.parsers import fan_out_list, upstream_delay_list
from bench.progress import STARTUP_SECONDS, say
from bench.report.tables import number, requests_cell, table
from bench.routes import ROUTES
from bench.sut import sources
from bench.sut.sources import DEFAULT_FAN_OUT, DEFAULT_UPSTREAM_DELAY, timeout
from infra.delays import Jittered, parse_jittered

THREADED = ("sync", "gthread")  # gunicorn's workers whose request holds its thread
SATURATED_SHARE = 0.8  # of one core: the rating service's, past which it may bound the apps

INTRO = (
    "Each app asking its sources per request: req/s, p99 and the bound its concurrency "
    "sets, in flight / time per request (Little's law). In flight: wrk's connections, and "
    "where a request holds its thread (gunicorn's sync and threaded workers) at most "
    "processes x threads. Time per request: for the apps that call one after another, "
    "fan-out x upstream delay + database time; for those that call all at once, the "
    "slowest of the fan-out's answers (the expected largest of N jittered delays) + "
    "database time. Database time: round trips x --db-delay (0 direct, where it is well "
    "under a millisecond). Upstream CPU: the rating service's microseconds per answered "
    "request of the app (all its sources together). PSS: the app's memory at rest -> the "
    "largest at the end of the row's runs."
)


def request_seconds(calls_out, count, delay_text, db_seconds=0.0):
    """The least time one request takes waiting: its calls out (sequential:
    one after another; concurrent: the slowest of `count`) and its database."""
    delay = parse_jittered(delay_text)
    if calls_out == "sequential":
        waiting = count * delay.mean
    else:  # the expected largest of count uniform delays on [low, high]
        waiting = delay.low + (delay.high - delay.low) * count / (count + 1)
    return waiting + db_seconds


def in_flight(app_run, clients):
    """The requests the app can have waiting on its sources at once."""
    if app_run.worker_class in THREADED and app_run.workers:
        return min(clients, app_run.workers * (app_run.threads or 1) * app_run.replicas)
    return clients


def bound(peak, app_run):
    """(req/s, in flight) the app cannot exceed in peak's condition, or None."""
    if app_run is None or not app_run.calls_out or not peak.fan_out:
        return None
    trips = [r["round_trips_per_request"] for r in peak.runs if r.get("round_trips_per_request")]
    db_seconds = (min(trips) if trips else 1.0) * peak.db_delay_ms / 1000
    seconds = request_seconds(app_run.calls_out, peak.fan_out, peak.upstream_delay, db_seconds)
    flight = in_flight(app_run, peak.connections)
    return (flight / seconds if seconds else None), flight


def bound_cell(limit, requests_per_s):
    if not limit or not limit[0]:
        return "-"
    return f"{limit[0]:,.0f} ({limit[1]}), {requests_per_s / limit[0]:.0%}"


def upstream_of(peak, key):
    """The largest of the runs' rating-service figure `key`, or None."""
    values = [r["upstream"][key] for r in peak.runs if (r.get("upstream") or {}).get(key)]
    return max(values, default=None)


def upstream_lines(peaks):
    """What the rating service spent at most, and whether it ever saturated."""
    shares = [(upstream_of(p, "cpu_share"), p) for p in peaks if upstream_of(p, "cpu_share")]
    if not shares:
        return []
    share, at = max(shares, key=lambda item: item[0])
    late = [p for p in peaks if upstream_of(p, "saturated_s")]
    lines = [
        f"The rating service took at most {share:.0%} of one core ({at.app}, fan-out "
        f"{at.fan_out}, {at.upstream_delay}, {at.connections} connections)."
    ]
    if late or share > SATURATED_SHARE:
        where = "; ".join(
            f"{p.app} {p.fan_out} x {p.upstream_delay}: {upstream_of(p, 'saturated_s')} s"
            for p in late
        )
        lines.append(
            "**It saturated (a second it answered late, or used most of a core) while "
            f"measuring {where}: those figures may be its bound, or the shared machine's, "
            "not the app's.**"
        )
    else:
        lines.append("It never saturated: no figure below is its bound.")
    return [" ".join(lines), ""]


def past_deadline(apps):
    """A line per app and condition whose calls one after another outlast the
    apps' deadline: its answers name the sources it had no time for."""
    lines = []
    for a in apps:
        if a.calls_out != "sequential" or not a.fan_out:
            continue
        limit = timeout(a.settings or {})
        if request_seconds(a.calls_out, a.fan_out, a.upstream_delay) > limit:
            lines.append(
                f"- {a.app}, {a.fan_out} x {a.upstream_delay}: past its {limit:g} s deadline "
                "(UPSTREAM_TIMEOUT), its answers name the sources it did not reach unavailable"
            )
    return list(dict.fromkeys(lines)) + ([""] if lines else [])


def which_bound(apps):
    """One line per app: the bound that applies to it, and why."""
    lines = []
    for app in dict.fromkeys((a.app, a.calls_out) for a in apps if a.calls_out):
        name, calls = app
        if calls == "sequential":
            lines.append(
                f"- {name}: calls its sources one after another: in flight / (fan-out x "
                "upstream delay + database time)"
            )
        else:
            lines.append(
                f"- {name}: calls its sources all at once: in flight / (the slowest answer "
                "+ database time)"
            )
    return lines + [""]


def section(results):
    """Per deployment, each app per database delay, upstream delay and
    fan-out (rows) and connection count (columns); [] without sources."""
    peaks = [p for p in results.measurements if p.fan_out]
    if not peaks:
        return []
    counts = sorted({p.connections for p in peaks})
    app_runs = {
        (a.app, a.configuration, a.db_delay_ms, a.fan_out, a.upstream_delay): a
        for a in results.apps
    }
    header = ["app", "DB delay", "upstream delay", "fan-out", "PSS MiB rest -> end"]
    for count in counts:
        header += [f"c={count} req/s", "p99 ms", "bound (in flight), reached", "upstream CPU µs"]
    lines = ["## When a request waits on other services: fan-out x upstream delay", ""]
    lines += [INTRO, ""] + which_bound(results.apps) + past_deadline(results.apps)
    lines += upstream_lines(peaks)
    conditions = list(dict.fromkeys((p.db_delay_ms, p.upstream_delay, p.fan_out) for p in peaks))
    for deployment in dict.fromkeys(p.deployment for p in peaks):
        rows = []
        for app in dict.fromkeys(a.app for a in results.apps):
            for delay, upstream, fan_out in conditions:
                cells, rest, ends = [], None, []
                for count in counts:
                    key = (app, deployment, delay, upstream, fan_out, count)
                    peak = next((p for p in peaks if row_key(p) == key), None)
                    if not peak:
                        cells += ["-"] * 4
                        continue
                    ran = (app, peak.configuration or deployment, delay, fan_out, upstream)
                    app_run = app_runs.get(ran)
                    rest = app_run.pss_rest_mib if app_run else rest
                    ends.append(peak.pss_mib)
                    cells += [
                        requests_cell(peak.summary),
                        f"{peak.summary.latency_ms['p99']:,.1f}",
                        bound_cell(bound(peak, app_run), peak.summary.requests_per_s),
                        number(upstream_of(peak, "cpu_us_per_request")),
                    ]
                if any(cell != "-" for cell in cells):
                    memory = f"{number(rest)} -> {number(max(filter(None, ends), default=None))}"
                    rows.append([app, f"{delay:g} ms", upstream, str(fan_out), memory, *cells])
        if rows:
            lines += [f"### {deployment}: GET /films/995/ratings/", "", table(header, rows), ""]
    return lines


def row_key(peak):
    return (
        peak.app,
        peak.deployment,
        peak.db_delay_ms,
        peak.upstream_delay,
        peak.fan_out,
        peak.connections,
    )


def options(group):
    group.add_argument(
        "--fan-out",
        dest="fan_outs",
        type=fan_out_list,
        default=(),
        metavar="N[,N...]",
        help="the ratings route's sources per request: each app told of N (UPSTREAM_FANOUT) "
        "of the rating service the run starts (python -m upstream), each N a start of every "
        "app; implies --routes ratings (with it and no --fan-out: 3)",
    )
    group.add_argument(
        "--upstream-delay",
        dest="upstream_delays",
        type=upstream_delay_list,
        default=(),
        metavar="D[~J][,...]",
        help="each rating answered D after it is asked, give or take J: e.g. 10ms,50ms~10ms,"
        "200ms, the rating service started once per delay (default 50ms~10ms)",
    )


def defaults(options):
    """--fan-out or --upstream-delay without --routes: the ratings route
    alone. Where the run starts that route's sources (not a --target's: its
    own), three of them, each answering 50ms~10ms after it is asked, unless
    --fan-out and --upstream-delay say otherwise."""
    routes = options.routes
    if routes is None and (options.fan_outs or options.upstream_delays):
        routes = ["ratings"]
    if routes is None or options.target or not any(ROUTES[key].fans_out for key in routes):
        return {"routes": routes}
    return {
        "routes": routes,
        "fan_outs": options.fan_outs or DEFAULT_FAN_OUT,
        "upstream_delays": options.upstream_delays or DEFAULT_UPSTREAM_DELAY,
    }


def refused(options):
    """The ratings route's sources: started by the run for the apps it starts
    (a --target has its own), for the closed loop, answering within the
    apps' deadline; the open loop at rates given, not auto's (fractions of
    peaks of every fan-out at once)."""
    asked = options.fan_outs or options.upstream_delays
    if asked and options.target:
        return "--fan-out and --upstream-delay start the apps' sources: not with --target"
    if asked and not any(ROUTES[key].fans_out for key in options.routes):
        return "--fan-out and --upstream-delay are the ratings route's: add ratings to --routes"
    if asked and options.rates and options.rates.auto:
        return "--rate auto: not with --fan-out (give the rates: R,...)"
    try:
        limit = timeout(options.sut.env)
    except ValueError:
        return "--env UPSTREAM_TIMEOUT: not a number of seconds"
    late = [delay for delay in options.upstream_delays if delay.high >= limit]
    if late:
        return (
            f"--upstream-delay {late[0]}: a source would answer after the apps' UPSTREAM_TIMEOUT "
            f"({limit:g}s; --env UPSTREAM_TIMEOUT=S gives them longer)"
        )
    return None


def conditions(options):
    """One condition per upstream delay and fan-out (1 without the ratings
    route's sources); the rating service started once per upstream delay."""
    if not options.upstream_delays:
        return one_condition(options)
    starts = {"upstream": (len(options.upstream_delays), STARTUP_SECONDS)}
    return len(options.upstream_delays) * len(options.fan_outs), starts


def sweep(options, sweeping):
    """Per upstream delay, the rating service started on a port per source
    of the largest fan-out, then each fan-out in turn (the stage's fan_out);
    the service's record added to what the run gathered once its fan-outs are
    measured, and the service stopped."""
    if not options.upstream_delays:
        yield from sweeps_nothing(options, sweeping)
        return
    for delay in options.upstream_delays:
        sweeping.progress.step("upstream", f"start the rating service, each rating {delay} away")
        with contextlib.ExitStack() as serving:
            log = serving.enter_context(open(f"{sweeping.log_base}-upstream-{delay}.log", "w"))
            upstream = sources.serving(serving, delay, max(options.fan_outs), log)
            for count in options.fan_outs:
                say(f"ratings: {count} source(s) per request, each {delay} away")
                yield {"fan_out": sources.FanOut(count, delay, upstream)}
            sweeping.add({"upstreams": [sources.record(upstream, delay)]})


MODE = Mode(
    "fan_out",
    section,
    title="the ratings route's sources",
    options=options,
    fields=(("fan_outs", tuple[int, ...], ()), ("upstream_delays", tuple[Jittered, ...], ())),
    defaults=defaults,
    refused=refused,
    conditions=conditions,
    sweep=sweep,
)
