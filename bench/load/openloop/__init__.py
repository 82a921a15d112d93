"""Open-loop HTTP load: requests leave on a fixed schedule, latency counts from
each request's *intended* send time.

    python -m bench.load.openloop URL --rate 1000 --connections 50 --duration 10
    python -m bench.load.openloop URL/reviews/ --rate 500 --method POST \\
        --body '{"film_id": 995, "rating": 4}'

    python -m bench.load.openloop URL --phases 20:50,10:300,30:50 --objective-ms 100

Prints one line, "OPENLOOP_JSON {...}" (what run() returns). Request i is due
at start + i / rate; with --phases, a schedule of (seconds, rate) phases, one
after the other, each as one rate is (a step load: a spike and its recovery). A
due request goes out on a free connection (opened on demand, up to
--connections, kept alive when the server allows); when every connection is
busy it waits for one, and its wait counts in its latency. So a server that
stalls for a second shows a second in the tail, measured. A closed-loop
generator stops sending during a stall; wrk 4.1 then back-fills synthetic
samples from its mean interval (its stats_correct) so its p99 shows the stall
too, but it can only measure at the server's saturation: it cannot say what the
latency is at 200 req/s.

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
status); failed ones are counted, not timed. pace counts the answers that
ended in the schedule's second half against the requests due in it: about
equal where the server kept up, fewer where its queue grew. A 503 (an app's
refusal past its capacity) is a non-2xx too; `refused` counts them apart,
with their latency and how many carried Retry-After, and `ok_histogram` holds
the 2xx answers' latencies alone (goodput: those within an objective).
per_second also says how the requests due in each second ended: due, ok,
good (2xx within --objective-ms; None without it), refused, errors.

A request it gives up on (the timeout) is closed with its connection: the
generator never reuses one whose answer is still owed. What the server does
with the request then is the server's (docs/benchmark.md, "A spike and the
recovery").
"""

import sys
from importlib import metadata

from bench.sut.processes import marked_json, run_logged, taskset

NAME = "bench.load.openloop"
EXTRAS = ["hdrhistogram"]  # what it needs of requirements-openloop.txt
MARKER = "OPENLOOP_JSON "
# The most requests/s one generator process is asked to offer (--rate, and
# its own command line). Measured against nginx answering a constant on the
# shared 2-core VM: the schedule held (achieved == offered) at 30,000 to
# 60,000 req/s when the machine was quiet, fell to 25,000-47,000 when it was
# busy, and no run sent more than 84,000/s, however much was asked. Above it
# the schedule only piles up requests that cannot leave on time; at 1e99
# (before this bound) the release loop never yielded and never ended.
MAX_RATE = 50_000
AUTO_FRACTIONS = (0.25, 0.5, 0.75, 0.9)
# Requests that failed: sent but no answer within the timeout (a POST may
# still have been written), never sent (no free connection within the
# timeout: certainly not written), the connection broke; and "connect":
# attempts to open a connection that failed (attempts, not requests).
ERROR_KINDS = ("timeout", "not_sent", "socket", "connect")
REFUSED = 503  # a server's refusal past its capacity (Service Unavailable)


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


def command(
    url, rate, connections, duration, method="GET", body=None, timeout=10, pin=None,
    token_file=None, phases=None, objective_ms=None,
):  # fmt: skip
    """The command line of one run (pin: a taskset CPU list), as wrk.command();
    token_file: the door's write token, which every request then carries;
    phases: [(seconds, rate)], a schedule offered instead of rate for duration;
    objective_ms: per second, the 2xx within it are counted (goodput)."""
    args = [sys.executable, "-m", "bench.load.openloop", url]
    if phases:
        schedule = ",".join(f"{seconds:g}:{r:g}" for seconds, r in phases)
        args += [f"--phases={schedule}", f"--connections={connections}"]
    else:
        args += [f"--rate={rate:g}", f"--connections={connections}", f"--duration={duration:g}"]
    args.append(f"--timeout={timeout:g}")
    if objective_ms is not None:
        args.append(f"--objective-ms={objective_ms:g}")
    if method != "GET":
        args.append(f"--method={method}")
    if body is not None:
        args.append(f"--body={body}")
    if token_file:
        args.append(f"--write-token-file={token_file}")
    return taskset(args, pin)


def first(phases, seconds):
    """The schedule's first `seconds`: [(seconds, rate)] phases cut there (a
    warm-up of a schedule offers its start)."""
    cut, left = [], seconds
    for length, rate in phases:
        if left <= 0:
            break
        cut.append((min(length, left), rate))
        left -= length
    return cut


def run(args, log=None):
    """Run command(...) in a subprocess; its report (a dict). Raises OpenLoopError."""
    completed = run_logged(args, log)
    if completed.returncode != 0:
        raise OpenLoopError(f"generator exited with {completed.returncode}: {completed.stderr}")
    return parse_report(completed.stdout)


def parse_report(text):
    """The last OPENLOOP_JSON line of text, as a dict; OpenLoopError if none."""
    report = marked_json(text, MARKER)
    if report is None:
        raise OpenLoopError("the generator printed no report")
    return report


def version():
    python = sys.version.split()[0]
    return f"{NAME} (hdrhistogram {metadata.version('hdrhistogram')}, Python {python})"
