"""--tune's section of the report (bench/modes/tune.py): the best configuration
per app and condition, what it gained over the as-shipped one, and the curve:
every configuration's req/s, p99 and capacity. A view of the records: no mode
imported."""

from bench.report.tables import number, table
from bench.routes import ROUTES
from bench.sut.deployments import AS_SHIPPED, TRIAL_SECONDS, TRIAL_STEPS, TUNING

INTRO = (
    "Per app and condition, the configurations its practitioners would try, on the same "
    "cores and connection budget, each run {seconds}s per route closed loop, then its "
    "capacity searched from there ({steps} rates of {seconds}s, one round: the curve below); "
    "the best by the geometric mean of its capacities over the routes, then measured in "
    "rotation as any deployment is (the tables headed _best_). A configuration that kept the "
    "objective at no rate on some route is never the best. Against: each app's serve.sh as it "
    "ships (one process per core: 16 threads each for Flask and Falcon, an event loop for Quart "
    "and Sanic)."
)
BY_REQUESTS = (  # a file written before --tune chose by capacity
    "Per app and condition, the configurations its practitioners would try, on the same "
    "cores and connection budget, each run {seconds}s per route (the curve below); the best "
    "by the geometric mean of its req/s over the routes, then measured in rotation."
)


def knob(trials):
    """The best trial's score over the as-shipped one's, or None."""
    best = next((t for t in trials if t.chosen), None)
    shipped = [t for t in trials if t.deployment in AS_SHIPPED]
    if best is None or not shipped or not shipped[0].score:
        return None
    return best.score / shipped[0].score


def objective_words(results):
    """The objective --tune chose by, as the report states it."""
    found = results.objective
    if not found:
        return None
    # Recorded since the objective said whether it was given; before, the command.
    given = found.get("given", "--slo" in results.command)
    given = "--slo" if given else "the default, without --slo"
    return f"p{found['percentile']:g} <= {found['ms']:g} ms ({given})"


def best_cell(mine):
    best = next((t for t in mine if t.chosen), None)
    return best.deployment if best else "none: every configuration broke the objective"


def curve_cells(t, routes):
    """A configuration's cells: closed-loop req/s and p99, and its capacity."""
    cells = [f"{t.requests_per_s[r]:,.0f}, {t.p99_ms[r]:,.1f}" for r in routes]
    if t.capacity_rps:
        cells.append(", ".join(number(t.capacity_rps.get(r)) for r in routes))
        cells.append(t.rejected or "")
    return cells


def section(results):
    """The best configuration per app and condition, what it gained over the
    as-shipped one, and the curve: every configuration's req/s, p99 and capacity."""
    trials = results.tuning
    if not trials:
        return []
    routes = list(trials[0].requests_per_s)
    conditions = list(dict.fromkeys((t.db_delay_ms, t.connections) for t in trials))
    by_capacity = any(t.capacity_rps for t in trials)
    intro = INTRO if by_capacity else BY_REQUESTS
    lines = [
        "## Each app at its best (--tune)",
        "",
        intro.format(seconds=TRIAL_SECONDS, steps=TRIAL_STEPS),
        "",
    ]
    if by_capacity:
        lines += [f"The objective: {objective_words(results)}.", ""]
    header = ["app", "DB delay", "clients", "best", "x as shipped"]
    rows = []
    for app in dict.fromkeys(t.app for t in trials):
        for delay, clients in conditions:
            mine = [
                t for t in trials if (t.app, t.db_delay_ms, t.connections) == (app, delay, clients)
            ]
            if mine:
                rows.append(
                    [
                        app,
                        f"{delay:g} ms",
                        str(clients),
                        best_cell(mine),
                        number(knob(mine), "{:.2f}x"),
                    ]
                )
    lines += [
        table(header, rows),
        "",
        "The curve (search runs, req/s and p99 ms per route, "
        + (
            "the capacity per route at the objective and why a configuration may not be chosen, "
            if by_capacity
            else ""
        )
        + "and the configuration's memory once started; the chosen in bold):",
        "",
    ]
    header = ["app", "DB delay", "clients", "configuration"]
    header += [f"{ROUTES[route].label} req/s, p99" for route in routes]
    if by_capacity:
        header += [
            "capacity req/s (" + ", ".join(ROUTES[r].label for r in routes) + ")",
            "not chosen because",
        ]
    header += ["PSS MiB at rest"]
    rest = {(a.app, a.deployment, a.db_delay_ms): a.pss_rest_mib for a in results.apps}
    rows = []
    order = list(TUNING)
    for t in sorted(
        trials, key=lambda t: (t.app, t.db_delay_ms, t.connections, order.index(t.deployment))
    ):
        name = f"**{t.deployment}**" if t.chosen else t.deployment
        memory = number(rest.get((t.app, t.deployment, t.db_delay_ms)))
        cells = curve_cells(t, routes)
        rows.append([t.app, f"{t.db_delay_ms:g} ms", str(t.connections), name, *cells, memory])
    return lines + [table(header, rows), ""]
