"""A small synthetic run, in the JSON form a run saves, carrying the fields
the capacity issue adds (bench/report/explorer/model.py's docstring): the
capacity within a p99 objective found from each peak, with its 95% interval, its CPU per
request by part, its req/s interval; the run's ratios and A/A noise floor.
Made up, and small: two apps, two delays, two client counts, one route."""

APPS = {"flask": 400.0, "quart": 600.0}  # req/s at 0 ms and 10 clients
DELAYS = [0.0, 10.0]
CLIENTS = [10, 50]
OBJECTIVE = {"percentile": 99, "ms": 100}


def figures(app, delay, clients):
    """A peak's req/s and p99: fewer req/s and more latency the farther the
    database; quart and flask equal at 10 ms and 50 clients (the interval case)."""
    rps = APPS[app] * (10 / (10 + delay)) * (1.2 if clients == 50 else 1.0)
    if (delay, clients) == (10.0, 50):
        rps = 300.0 if app == "flask" else 310.0
    p99 = 20 + delay * 3 + clients / 2 + (10 if app == "flask" else 0)
    return rps, p99


def peak(app, delay, clients):
    rps, p99 = figures(app, delay, clients)
    latency = {
        "mean": p99 / 3,
        "p50": p99 / 4,
        "p75": p99 / 3,
        "p90": p99 / 2,
        "p99": p99,
        "p99.9": p99 * 1.5,
        "max": p99 * 2,
    }
    return {
        "app": app,
        "deployment": "tuned",
        "connections": clients,
        "route": "film",
        "summary": {
            "runs": 3,
            "requests_per_s": rps,
            "requests_per_s_min": rps * 0.9,
            "requests_per_s_max": rps * 1.1,
            "requests_per_s_ci95": [rps * 0.95, rps * 1.05],
            "latency_ms": latency,
            "requests": int(rps * 5),
            "socket_errors": 0,
            "non_2xx": 0,
        },
        "runs": [{"connections_held": 8 if app == "flask" else 20}],
        "db_delay_ms": delay,
        "pss_mib": 60.0 if app == "flask" else 90.0,
        "cpu_us_per_request": {
            "app": 900.0 if app == "flask" else 700.0,
            "postgres": 200.0,
            "generator": {"value": 50.0, "ci95": [45.0, 55.0]},
        },
    }


def capacity(app, delay, clients):
    """The capacity found from that peak (bench/records/ Capacity)."""
    rps, _ = figures(app, delay, clients)
    return {
        "app": app,
        "deployment": "tuned",
        "route": "film",
        "connections": clients,
        "db_delay_ms": delay,
        "capacity_rps": {
            "value": rps * 0.8,
            "ci95": [rps * 0.75, rps * 0.85],
            "objective": OBJECTIVE,
        },
        "peak_rps": rps,
    }


def app_run(app, delay):
    return {
        "app": app,
        "deployment": "tuned",
        "status": "measured",
        "server": "serve.sh",
        "workers": 2,
        "threads": 4 if app == "flask" else None,
        "pool_size": 10,
        "db_connections": 20,
        "db_delay_ms": delay,
        "pss_rest_mib": 40.0,
        "replicas": 1,
        "server_command": f"gunicorn {app}_app:create_app()",
        "versions": {app: "1.0"},
    }


def synthetic():
    """The run, as a dict (its JSON form)."""
    return {
        "command": "./benchmark.sh flask quart --db-delay 0,10ms -c 10,50 --routes film --repeat 3",
        "environment": {
            "date": "2030-01-01T00:00:00+00:00",
            "git_commit": "0" * 40,
            "git_dirty": False,
            "python": "3.11.7",
            "os": "Linux",
            "cpu_model": "Test CPU",
            "cpu_count": 2,
            "wrk": "wrk 4.1.0",
        },
        "wrk": {
            "threads": 2,
            "connections": CLIENTS,
            "duration_s": 5,
            "warmup_s": 1,
            "timeout_s": 10,
            "repeat": 3,
            "routes": ["film"],
        },
        "apps": [app_run(app, delay) for delay in DELAYS for app in APPS],
        "measurements": [peak(app, d, c) for d in DELAYS for c in CLIENTS for app in APPS],
        "capacity": [capacity(app, d, c) for d in DELAYS for c in CLIENTS for app in APPS],
        "db_delays_ms": DELAYS,
        "ratios": [
            {
                "app": "quart",
                "deployment": "tuned",
                "baseline": "flask (tuned)",
                "route": "film",
                "db_delay_ms": 0.0,
                "connections": 10,
                "metric": "capacity",
                "value": 1.5,
                "ci95": [1.4, 1.6],
            },
            {
                "app": "quart",
                "deployment": "tuned",
                "baseline": "flask (tuned)",
                "route": "film",
                "db_delay_ms": 10.0,
                "connections": 50,
                "metric": "capacity",
                "value": 1.03,
                "ci95": [0.97, 1.09],
            },
        ],
        "noise_floor": [{"value": 1.0, "ci95": [0.98, 1.02]}],
        "schema": 2,
    }
