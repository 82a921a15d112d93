"""What bounds a capacity: the clients, the database's delay, the
connection budget or the CPU, each worked out from what was measured; and how
the open loop held its connections at the capacity's rate."""

from bench.modes.capacity.verdict import mean_of

EXPLAINS = 1.25  # a bound within this of the closed-loop peak is what saturated it


def at_capacity(search, value):
    """(rate, its runs) of the step the capacity is: its confirmation, else
    its step, else the lowest offered."""
    if value in search.confirmations:
        return value, [search.confirmations[value]]
    rate = value if value in search.tried else min(search.tried)
    return rate, search.tried[rate]


def connection_model(search, value):
    """How the open loop held its connections at the capacity's rate: how many
    it could open, how many it did, and whether they were kept alive (gunicorn's
    sync workers close every connection after its answer)."""
    _, runs = at_capacity(search, value)
    opened = sum(run.opened for run in runs)
    requests = sum(run.answered for run in runs)
    kept = opened * 2 <= requests
    words = (
        f"up to {search.connections} connections, kept alive ({opened:,} opened for "
        f"{requests:,} requests)"
        if kept
        else f"one connection per request, up to {search.connections} at once (the server "
        f"closed them: {opened:,} opened for {requests:,} requests)"
    )
    return {
        "connections": search.connections,
        "opened": opened,
        "requests": requests,
        "kept_alive": kept,
        "words": words,
    }


def unloaded_ms(search):
    """The mean time a request took from its send at the least loaded step
    (the app's own time and its waits on Postgres), or None."""
    found = [mean_of([run.service_ms for run in runs]) for runs in search.tried.values()]
    return min((ms for ms in found if ms), default=None)


def bounds(search, value):
    """{name: (req/s, how)}: what each bound allows, from what was measured.
    clients: the open loop's connections over the time a request takes
    unloaded (Little's law: the most they could carry); delay: the requests
    the app can have waiting on Postgres at once over the time each waits
    there (round trips x delay); connections: the budget over the same; CPU:
    the closed-loop peak, what the machine gave the app with every other
    bound out of the way."""
    found = {}
    unloaded = unloaded_ms(search)
    if unloaded:
        found["clients"] = (
            search.connections / (unloaded / 1000),
            f"{search.connections} connections / {unloaded:,.1f} ms a request unloaded",
        )
    record, delay_ms = search.target.record, search.target.db_delay * 1000
    trips = mean_of([run.round_trips for runs in search.tried.values() for run in runs])
    if delay_ms and trips:
        waits = trips * delay_ms / 1000
        how = f"({trips:.1f} round trips x {delay_ms:g} ms)"
        if record.in_flight and record.in_flight < (record.db_connections or 0):
            found["delay"] = (record.in_flight / waits, f"{record.in_flight} in flight / {how}")
        if record.db_connections:
            found["connections"] = (
                record.db_connections / waits,
                f"a budget of {record.db_connections} connections / {how}",
            )
    found["CPU"] = (search.peak_rps, "the closed-loop peak")
    return found


def bound(search, value):
    """The bound that binds. The closed-loop peak is where the tightest bound
    saturated: a bound within EXPLAINS of it explains it. Else, where the
    app's requests in flight are its limit, the delay binds if they spend at
    least half their time waiting on Postgres at the peak (in flight / peak
    is the time each takes; round trips x delay of it on Postgres), and the
    CPU binds otherwise. With how it was computed and how much of it the
    capacity reaches."""
    found = bounds(search, value)
    cpu = found["CPU"][0]
    others = {key: rps for key, (rps, _) in found.items() if key != "CPU"}
    name = min(others, key=others.get) if others else None
    if name is None or others[name] > cpu * EXPLAINS:
        name = "CPU"
        record = search.target.record
        if "delay" in found and cpu and record.in_flight:
            waiting = cpu / found["delay"][0]  # the share of each slot's time on Postgres
            if waiting >= 0.5:
                name = "delay"
                rps, how = found["delay"]
                found["delay"] = (
                    cpu,
                    f"{how} = {rps:,.0f} req/s at most; at the closed-loop peak each request "
                    f"spent {waiting:.0%} of its time waiting on Postgres",
                )
    rps, how = found[name]
    share = value / rps if rps else 0.0
    return {
        "name": name,
        "rps": rps,
        "why": f"{how}: {rps:,.0f} req/s; capacity {share:.0%} of it",
        "all": {key: rps for key, (rps, _) in found.items()},
    }
