"""Open-loop HTTP load: requests leave on a fixed schedule, latency counts from
each request's *intended* send time.

    python -m bench.openloop URL --rate 1000 --connections 50 --duration 10
    python -m bench.openloop URL/reviews/ --rate 500 --method POST \\
        --body '{"film_id": 995, "rating": 4}'

Prints one line, "OPENLOOP_JSON {...}" (what run() returns). Request i is due at
start + i / rate. A due request goes out on a free connection (opened on
demand, up to --connections, kept alive when the server allows); when every
connection is busy it waits for one, and its wait counts in its latency. So a
server that stalls for a second shows a second in the tail, measured. A
closed-loop generator stops sending during a stall; wrk 4.1 then back-fills
synthetic samples from its mean interval (its stats_correct) so its p99 shows
the stall too, but it can only measure at the server's saturation: it cannot
say what the latency is at 200 req/s.

Why this generator and not autocannon 9.0.0 (npm), measured on this project's
shared 2-core VM against a trivial server and the apps:
- autocannon's -R is not a schedule: each connection may send rate/connections
  requests per wall-clock second, back to back, then waits for the next second
  (lib/httpClient.js, reqsMadeThisSecond): -R 500 achieved 545 req/s, 458 to
  638 in single seconds. Its coordinated-omission correction back-fills values
  1 ms apart (recordValueWithExpectedInterval with Math.ceil(1 / rate))
  whatever the rate; its latencies are whole milliseconds (p50 "0" or "1" for
  a 0.1-0.3 ms answer). Against gunicorn's sync workers, which close the
  connection after each answer, -R 200 -c 20 sent 807 of 1,600 requests with
  a p50 of 1.2 s; against Sanic at the same rate its p99 was 133 ms where this
  generator measured 17 ms, and a 1 s stall showed as a 0.6 s maximum.
- This one holds its schedule: achieved == offered (to the request) at 1,000
  to 8,000 req/s against a trivial server, for 14-33 % of one core; it records
  microseconds, and reports its own lateness (send_lag_ms: due time to
  release, before any wait for a connection; p50 0.1 ms, p99 1-3 ms on the
  busy VM). uvloop, because asyncio's loop was late by 0.6 ms at p50. Its
  timers are millisecond-grained, so a request may leave up to ~1 ms late;
  that lateness is in the latency (a client on this loop would see it) and in
  send_lag_ms.

Failures: a timeout, a socket error or a non-2xx status. A request that waits
for a free connection longer than the timeout is never sent (not_sent).
success_rate = ok / sent, where sent is every request the schedule released;
the run ends when each has ended (at most the timeout after the schedule), so
ok is exact: every 2xx a POST run counts is a write the server confirmed.
latency_ms, the spectrum and per_second time the answered requests (any
status); failed ones are counted, not timed.
"""

import argparse
import asyncio
import collections
import json
import math
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import httptools
from hdrh.histogram import HdrHistogram

from .processes import taskset

NAME = "bench.openloop"
ROOT = Path(__file__).resolve().parent.parent  # where `python -m bench.openloop` runs
MARKER = "OPENLOOP_JSON "
PERCENTILES = (50, 90, 95, 99, 99.9)
# HdrHistogram range in microseconds: 1 us to 1 h, 3 significant digits.
HIGHEST_US = 3_600_000_000
AUTO_FRACTIONS = (0.25, 0.5, 0.75, 0.9)
# A connection idle this long (s) is closed, not reused: shorter than the
# servers' keep-alive timeouts (uvicorn, Hypercorn: 5 s), so a server never
# closes a connection at the moment a request goes out on it (a false error).
IDLE_LIMIT = 2.0
# Requests that failed: sent but no answer within the timeout (a POST may
# still have been written), never sent (no free connection within the
# timeout: certainly not written), the connection broke; and "connect":
# attempts to open a connection that failed (attempts, not requests).
ERROR_KINDS = ("timeout", "not_sent", "socket", "connect")


def clock():
    """Seconds, to the microsecond: uvloop's loop.time() is whole milliseconds."""
    return time.perf_counter()


class OpenLoopError(RuntimeError):
    """The generator failed, or printed no report."""


def auto_rates(peaks, fractions=AUTO_FRACTIONS):
    """--rate auto: the same rates for every app, fractions of the *slowest*
    app's peak (req/s, e.g. wrk's), so that all are compared at equal offered
    load. ValueError if there is no positive peak."""
    slowest = min(peaks, default=0)
    if slowest <= 0:
        raise ValueError(f"no peak to take fractions of: {list(peaks)}")
    return [max(1, round(slowest * fraction)) for fraction in fractions]


def command(url, rate, connections, duration, method="GET", body=None, timeout=10, pin=None):
    """The command line of one run (pin: a taskset CPU list), as wrk.command()."""
    args = [
        sys.executable,
        "-m",
        "bench.openloop",
        url,
        f"--rate={rate:g}",
        f"--connections={connections}",
        f"--duration={duration:g}",
        f"--timeout={timeout:g}",
    ]
    if method != "GET":
        args.append(f"--method={method}")
    if body is not None:
        args.append(f"--body={body}")
    return taskset(args, pin)


def run(args, log=None):
    """Run command(...) in a subprocess; its report (a dict). Raises OpenLoopError."""
    completed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if log is not None:
        log.write(f"$ {' '.join(args)}\n{completed.stdout}{completed.stderr}\n")
    if completed.returncode != 0:
        raise OpenLoopError(f"generator exited with {completed.returncode}: {completed.stderr}")
    return parse_report(completed.stdout)


def parse_report(text):
    """The last OPENLOOP_JSON line of text, as a dict; OpenLoopError if none."""
    lines = [line for line in text.splitlines() if line.startswith(MARKER)]
    if not lines:
        raise OpenLoopError("the generator printed no report")
    return json.loads(lines[-1][len(MARKER) :])


def version():
    python = sys.version.split()[0]
    return f"{NAME} (hdrhistogram {metadata.version('hdrhistogram')}, Python {python})"


class Recorder:
    """Latencies from the intended send time, statuses and errors."""

    def __init__(self, start):
        self.start = start
        self.latency = HdrHistogram(1, HIGHEST_US, 3)
        self.service = HdrHistogram(1, HIGHEST_US, 3)  # from the actual send
        # When the generator released a request - when it was due: its own
        # lateness, before any wait for a connection.
        self.lag = HdrHistogram(1, HIGHEST_US, 3)
        self.per_second = collections.defaultdict(list)  # second -> latencies, ms
        self.statuses = collections.Counter()
        self.errors = collections.Counter()  # ERROR_KINDS
        self.sent_on_wire = 0
        self.last_answer = start

    def released(self, intended, now):
        self.lag.record_value(max(1, round((now - intended) * 1e6)))

    def answered(self, status, intended, sent_at, now):
        self.statuses[status] += 1
        self.last_answer = max(self.last_answer, now)
        latency_us = max(1, round((now - intended) * 1e6))
        self.latency.record_value(latency_us)
        self.service.record_value(max(1, round((now - sent_at) * 1e6)))
        self.per_second[int(intended - self.start)].append(latency_us / 1000)

    def failed(self, kind):
        self.errors[kind] += 1


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one request at a time. Kept alive when
    the server allows; gunicorn's sync workers close after every answer."""

    def __init__(self, on_done, on_lost):
        self.on_done = on_done  # called with (connection, status or error kind)
        self.on_lost = on_lost  # called with (connection) when an idle one closes
        self.transport = None
        self.parser = None
        self.reusable = True
        self.idle_since = 0.0

    def connection_made(self, transport):
        self.transport = transport
        self.idle_since = clock()

    def data_received(self, data):
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, AttributeError):  # garbage, or data unasked for
            self.reusable = False
            self.finish("socket")

    def connection_lost(self, exc):
        self.transport = None
        self.reusable = False
        if self.parser is not None:
            self.finish("socket")
        else:
            self.on_lost(self)

    def send(self, payload):
        self.parser = httptools.HttpResponseParser(self)
        self.transport.write(payload)

    # httptools callback
    def on_message_complete(self):
        self.reusable = self.parser.should_keep_alive()
        self.finish(self.parser.get_status_code())

    def finish(self, outcome):
        if self.parser is None:
            return  # already finished (a timeout, then the answer)
        self.parser = None
        self.on_done(self, outcome)

    def close(self):
        self.reusable = False
        if self.transport is not None:
            self.transport.close()


class Load:
    """The schedule, the connections, the queue of due requests.

    Connections open on demand, up to `connections`, and carry a request as
    soon as they are open: an idle connection that a gunicorn sync worker has
    accepted would hold that worker while it waits for a request."""

    def __init__(self, url, rate, connections, duration, method, body, timeout):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.payload = request_bytes(method, parts, body)
        self.rate, self.connections, self.duration = rate, connections, duration
        self.timeout = timeout
        self.idle = []  # open connections without a request, most recent last
        self.opening = 0
        self.open_count = 0  # open or opening
        self.waiting = collections.deque()  # intended times of due requests
        self.in_flight = {}  # connection -> (intended, sent_at, timer)
        self.loop = None
        self.recorder = None

    async def connect(self):
        """A new Connection; OSError (or TimeoutError) if the server is not there."""
        _, connection = await asyncio.wait_for(
            self.loop.create_connection(
                lambda: Connection(self.done, self.lost), self.host, self.port
            ),
            self.timeout,
        )
        return connection

    async def run(self):
        """Release the schedule, wait for the answers, report. OSError if the
        server cannot be reached at the start."""
        self.loop = asyncio.get_running_loop()
        self.idle.append(await self.connect())  # the first request's
        self.open_count = 1
        start = clock() + 0.01
        self.recorder = Recorder(start)
        total = round(self.rate * self.duration)
        for index in range(total):
            intended = start + index / self.rate
            delay = intended - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            self.release(intended)
        # Every released request ends: answered, failed, or timed out (sent or
        # still waiting), so the 2xx count is exact for a nothing-lost ledger.
        while self.waiting or self.in_flight:
            self.expire_waiting()
            await asyncio.sleep(0.01)
        for connection in self.idle:
            connection.close()
        return report(self.recorder, self, total, start)

    def release(self, intended):
        now = clock()
        self.recorder.released(intended, now)
        while self.idle and now - self.idle[-1].idle_since > IDLE_LIMIT:
            self.idle.pop().close()  # and every one below it: they idled longer
            self.open_count -= 1
        if self.idle:
            self.send(self.idle.pop(), intended)
        else:
            self.waiting.append(intended)
            self.open_more()

    def open_more(self):
        """Open connections for the waiting requests, within the limit."""
        while self.open_count < self.connections and self.opening < len(self.waiting):
            self.open_count += 1
            self.opening += 1
            self.loop.create_task(self.open_one())

    async def open_one(self):
        try:
            connection = await self.connect()
        except (OSError, TimeoutError):
            self.recorder.failed("connect")
            await asyncio.sleep(0.1)  # not a busy loop while the server is gone
            self.opening -= 1
            self.open_count -= 1
            self.open_more()
            return
        self.opening -= 1
        self.next_for(connection)

    def send(self, connection, intended):
        now = clock()
        timer = self.loop.call_later(self.timeout, self.expire, connection)
        self.in_flight[connection] = (intended, now, timer)
        self.recorder.sent_on_wire += 1
        connection.send(self.payload)

    def expire(self, connection):
        connection.reusable = False  # an answer may still come
        connection.finish("timeout")

    def done(self, connection, outcome):
        intended, sent_at, timer = self.in_flight.pop(connection)
        timer.cancel()
        if isinstance(outcome, int):
            self.recorder.answered(outcome, intended, sent_at, clock())
        else:
            self.recorder.failed(outcome)
        if connection.reusable:
            self.next_for(connection)
        else:
            connection.close()
            self.open_count -= 1
            self.open_more()

    def lost(self, connection):
        """An idle connection closed (the server's keep-alive timeout)."""
        if connection in self.idle:
            self.idle.remove(connection)
            self.open_count -= 1

    def next_for(self, connection):
        self.expire_waiting()
        if self.waiting:
            self.send(connection, self.waiting.popleft())
        else:
            connection.idle_since = clock()
            self.idle.append(connection)

    def expire_waiting(self):
        """Requests that waited for a connection longer than the timeout fail
        as not_sent: a client would have given up on them."""
        now = clock()
        while self.waiting and now - self.waiting[0] > self.timeout:
            self.waiting.popleft()
            self.recorder.failed("not_sent")


def request_bytes(method, parts, body):
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}"]
    data = (body or "").encode()
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def percentiles_ms(histogram):
    if histogram.get_total_count() == 0:
        return None
    return {
        "mean": histogram.get_mean_value() / 1000,
        **{f"p{p:g}": histogram.get_value_at_percentile(p) / 1000 for p in PERCENTILES},
        "max": histogram.get_max_value() / 1000,
    }


def spectrum(histogram):
    """[[percentile, ms], ...] from p0 to p99.999 by halving the remainder, as
    HdrHistogram's percentile distribution (for a 1/(1-p) axis)."""
    if histogram.get_total_count() == 0:
        return []
    points, remainder = [], 100.0
    while remainder >= 0.001:
        p = 100.0 - remainder
        points.append([p, histogram.get_value_at_percentile(p) / 1000])
        remainder /= 2**0.5
    points.append([100.0, histogram.get_max_value() / 1000])
    return points


def series(per_second, duration):
    """Per second of the schedule: requests answered and their p99, ms."""
    rows = []
    for second in range(math.ceil(duration)):
        values = sorted(per_second.get(second, []))
        p99 = values[min(len(values) - 1, math.ceil(0.99 * len(values)) - 1)] if values else None
        rows.append({"second": second, "count": len(values), "p99_ms": p99})
    return rows


def report(recorder, load, total, start):
    statuses = dict(sorted(recorder.statuses.items()))
    ok = sum(count for status, count in statuses.items() if 200 <= status < 300)
    answered = sum(statuses.values())
    elapsed = max(recorder.last_answer - start, 1e-9)
    return {
        "offered_rate": load.rate,
        "duration_s": load.duration,
        "connections": load.connections,
        "sent": total,
        "sent_on_wire": recorder.sent_on_wire,
        # Answers per second from the start to the last answer: below the
        # offered rate when the server fell behind (send_lag_ms tells
        # whether the generator did).
        "achieved_rate": answered / elapsed,
        "ok": ok,
        "non_2xx": answered - ok,
        "statuses": {str(status): count for status, count in statuses.items()},
        "errors": {kind: recorder.errors[kind] for kind in ERROR_KINDS},
        "success_rate": ok / total if total else 0.0,
        "latency_ms": percentiles_ms(recorder.latency),
        "service_ms": percentiles_ms(recorder.service),
        "send_lag_ms": percentiles_ms(recorder.lag),
        "spectrum": spectrum(recorder.latency),
        "per_second": series(recorder.per_second, load.duration),
        "generator": {"name": NAME, "version": version()},
    }


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--body", help="a JSON body (sent with Content-Type: application/json)")
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.connections < 1 or args.duration <= 0 or args.timeout <= 0:
        parser.error("--rate, --connections, --duration and --timeout must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    load = Load(
        args.url, args.rate, args.connections, args.duration, args.method, args.body, args.timeout
    )
    try:
        if args.loop == "uvloop":
            import uvloop  # the apps' loop: less CPU per request than asyncio's

            result = uvloop.run(load.run())
        else:
            result = asyncio.run(load.run())
    except OSError as error:
        sys.exit(f"{NAME}: {error}")
    result["generator"]["command"] = [NAME, *(argv if argv is not None else sys.argv[1:])]
    print(MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
