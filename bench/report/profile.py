"""The profile's section (--profile): per route and rate, each app's CPU
per request by layer, what the samples cover, and what sampling cost; the
layers' rules under it (bench/layers.py), and one sentence per app of where
its CPU goes beside the first app's."""

from bench import layers
from bench.report.tables import condition, condition_words, delay_words, number, table
from bench.routes import ROUTES
from bench.sut import cost

# The layers a reader compares first: what the migration changes.
STACK = ("server", "framework", "driver", "event loop")


def place(profile):
    """Where a profile was measured: a table of the section each."""
    return (
        profile.deployment,
        profile.db_delay_ms,
        profile.route,
        profile.rate,
        condition(profile),
    )


def control(results, profile):
    """The unsampled run at the same app, deployment, delay, route and rate
    (the open loop's Rate), or None."""
    fields = ("app", "deployment", "db_delay_ms", "route", "rate", "fan_out", "upstream_delay")
    key = [getattr(profile, name) for name in fields]
    for rate in results.openloop:
        if [getattr(rate, name) for name in fields] == key:
            return rate
    return None


def app_us(parts):
    return (parts or {}).get("app")


def coverage(profile):
    """The samples' seconds (samples / rate) over the user time they share out."""
    sampled = profile.sampled
    user = sampled["user_s"]
    return sampled["samples"] / sampled["rate_hz"] / user if user else None


def cost_cell(results, profile):
    """The app's CPU µs per request unsampled -> sampled, and py-spy's own."""
    unsampled = control(results, profile)
    before = app_us(unsampled and unsampled.cpu_us_per_request)
    after = app_us(profile.cpu_us_per_request)
    own = (profile.cpu_us_per_request or {}).get(cost.PROFILER)
    if before is None or after is None:
        return f"py-spy {number(own)} µs"
    return f"{before:,.0f} -> {after:,.0f} ({after / before - 1:+.0%}); py-spy {number(own)} µs"


def row(results, profile):
    per = profile.layers_us or {}
    sampled = profile.sampled
    processes = sampled["processes"]
    with_samples = [p for p in profile.workers if processes.get(str(p), {}).get("samples")]
    return [
        profile.app,
        number(app_us(profile.cpu_us_per_request)),
        *[number(per.get(layer)) for layer in layers.LAYERS],
        f"{sampled['samples']:,} ({len(with_samples)} of {len(profile.workers)} workers; "
        f"{sampled['errors']:,} dropped)",
        number(coverage(profile), "{:.0%}"),
        cost_cell(results, profile),
    ]


def why(profiles):
    """One sentence per app after the first: its server, framework, driver
    and event loop against the first app's, in µs of its CPU per request."""
    found = [p for p in profiles if p.layers_us]
    if len(found) < 2:
        return []
    first = found[0]

    def said(profile):
        per = profile.layers_us
        named = [f"{layer} {per[layer]:,.0f}" for layer in STACK if per.get(layer)]
        whole = app_us(profile.cpu_us_per_request)
        return f"{profile.app}'s {', '.join(named)} of its {whole:,.0f} µs"

    return [f"Per request: {said(first)}; " + "; ".join(said(p) for p in found[1:]) + "."]


def rules():
    """The layers' table: each layer, what it holds, and the files it claims."""
    claims = {layer: [] for layer in layers.LAYERS}
    passed = []
    for prefix, layer in layers.RULES:
        (claims[layer] if layer else passed).append(f"`{prefix}`")
    body = [[layer, held, ", ".join(claims[layer]) or "-"] for layer, held in layers.LAYERS.items()]
    return [
        table(["layer", "what", "frames in"], body),
        "",
        f"A sample is the layer of its innermost frame a rule claims; {', '.join(passed)} "
        "claim nothing (a sample there is its caller's), and a package no rule names is "
        "other.",
        "",
    ]


def section(results):
    profiles = results.profiles
    if not profiles:
        return []
    lines = [
        "## Where the CPU goes, by layer",
        "",
        "Each app offered the open loop's rates again while py-spy sampled every process of "
        "its server, 100 times a second, the thread holding the GIL, without pausing it "
        "(bench/sut/sampler.py; a sample whose stack changed while py-spy read it is dropped). "
        "CPU µs: the app's CPU per request in that run (the part app, /proc); its user "
        "share is shared out by the samples, its system share is the kernel's, so the "
        "layers add up to it. Covered: the samples kept, in seconds, over the user time "
        "(lower: samples dropped, and C code that ran with the GIL released, such as "
        "libpq's; higher: a thread holding the GIL while it waited for a core). Cost: the "
        "app's µs per request at the same rate unsampled -> sampled, and py-spy's own CPU "
        "per request. The flame graphs: the run's -flame-*.svg files.",
        "",
    ]
    header = ["app", "CPU µs", *[f"{layer} µs" for layer in layers.LAYERS]]
    header += ["samples", "covered", "cost"]
    for group in dict.fromkeys(place(p) for p in profiles):
        here = [p for p in profiles if place(p) == group]
        deployment, delay, route, rate, _ = group
        lines += [
            f"### {ROUTES[route].label} at {rate:,g} req/s, {deployment} deployment"
            + delay_words(delay, ", ")
            + condition_words(here[0], ", "),
            "",
            table(header, [row(results, p) for p in here]),
            "",
            *why(here),
            "",
        ]
    return lines + rules()
