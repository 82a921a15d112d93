"""A TCP proxy that adds a fixed delay to every round trip: a database on
another host, made on this one.

    python -m bench.sut.delay_proxy --listen 127.0.0.1:6000 --upstream 127.0.0.1:5433 --delay 5ms

Prints "delay_proxy listening on HOST:PORT" once it accepts connections, and
"DELAY_PROXY_JSON {"open", "peak", "total", "writes"}" on SIGUSR1 and on exit
(SIGTERM or Ctrl-C): the client connections it carried (an app's pools: how
many it really held) and the writes clients sent through it (each waits for its
answer: round trips). The benchmark runs it so: `with Launched(database_url,
delay_s, log) as proxy:` (proxy.url, proxy.counts()); the tests run it in a
thread of their own (tests/delay_proxy_thread.py).

How the delay is made: every chunk read from one side is written to the other
delay/2 seconds after it arrived, in both directions, so a query and its answer
(one round trip) wait `delay` in all, as a link with that round-trip time would.
Each direction of each connection is a FIFO: order is kept within a
connection, and connections do not wait for one another. The delay is a
floor: asyncio's timers wake on whole milliseconds, rounded up, so a round trip
takes delay + up to about 1 ms (+ the proxy's own copy) at low load. Opening a
connection is not delayed (Postgres' startup and authentication messages are).
There is no bandwidth limit and no back-pressure: database answers here are
small.

Why not a tool: the kernel's netem is missing here (tc answers "Specified
qdisc kind is unknown"); Toxiproxy is not in the registries this project uses
(PyPI, Debian, npm: there only its clients); the PyPI proxies found
(asynctcpproxy, tcp-proxy-server) add no delay and are unmaintained since 2019-2021,
and pynetem drives tc/netem.
"""

import argparse
import asyncio
import collections
import json
import selectors
import signal
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

from bench.sut.processes import marked_json, taskset
from infra.delays import parse_delay
from tools import ROOT, children

MARKER = "DELAY_PROXY_JSON "  # the line printed on exit: its connection counts


def parse_address(text):
    """'HOST:PORT' -> (host, port). ValueError if malformed."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"not HOST:PORT: {text!r}")
    return host, int(port)


def proxied_url(database_url, port, host="127.0.0.1"):
    """database_url with its host and port replaced by the proxy's."""
    parts = urlsplit(database_url)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


class Pipe:
    """One direction of one connection: chunks written `delay` after they arrived."""

    def __init__(self, loop, delay, count=None):
        self.loop, self.delay, self.count = loop, delay, count
        self.queue = collections.deque()  # (due, bytes or None for end of stream)
        self.target = None  # the transport to write to, once connected
        self.timer = None

    def put(self, data):
        if self.count and data is not None:
            self.count()
        self.queue.append((self.loop.time() + self.delay, data))
        if self.timer is None:
            self.flush()

    def connect(self, transport):
        self.target = transport
        self.flush()

    def flush(self):
        """Write what is due, then wake when the next chunk is."""
        self.timer = None
        if self.target is None:
            return
        now = self.loop.time()
        while self.queue and self.queue[0][0] <= now:
            _, data = self.queue.popleft()
            if data is None:
                self.target.close()
                self.queue.clear()
                return
            self.target.write(data)
        if self.queue:
            self.timer = self.loop.call_at(self.queue[0][0], self.flush)


class Side(asyncio.Protocol):
    """One socket of a proxied connection; what it reads goes into `outgoing`."""

    def __init__(self, outgoing, incoming, on_close=None):
        self.outgoing, self.incoming = outgoing, incoming
        self.on_close = on_close

    def connection_made(self, transport):
        self.incoming.connect(transport)

    def data_received(self, data):
        self.outgoing.put(data)

    def eof_received(self):
        self.outgoing.put(None)

    def connection_lost(self, exc):
        self.outgoing.put(None)
        if self.on_close:
            self.on_close(self)


class ProxyServer:
    """Accepts clients, opens one upstream connection for each, and counts
    them: how many connections an app's pools really hold."""

    def __init__(self, upstream, delay):
        self.upstream, self.delay = upstream, delay
        self.clients = set()
        self.peak = self.total = self.writes = 0

    def connections(self):
        """{"open", "peak", "total"}: client connections now, at most, ever."""
        return {"open": len(self.clients), "peak": self.peak, "total": self.total}

    def counts(self):
        """connections(), and "writes": chunks clients sent upstream, ever."""
        return {**self.connections(), "writes": self.writes}

    def count_write(self):
        self.writes += 1

    def client(self):
        loop = asyncio.get_running_loop()
        to_upstream = Pipe(loop, self.delay / 2, count=self.count_write)
        to_client = Pipe(loop, self.delay / 2)
        side = Side(to_upstream, to_client, on_close=self.clients.discard)
        self.clients.add(side)
        self.total += 1
        self.peak = max(self.peak, len(self.clients))
        loop.create_task(self.connect_upstream(to_upstream, to_client))
        return side

    async def connect_upstream(self, to_upstream, to_client):
        loop = asyncio.get_running_loop()
        host, port = self.upstream
        try:
            await loop.create_connection(lambda: Side(to_client, to_upstream), host, port)
        except OSError:
            if to_client.target is not None:
                to_client.target.close()  # as the database refusing would

    def report(self):
        print(MARKER + json.dumps(self.counts()), flush=True)

    async def serve(self, host, port, ready, signals=False):
        """Listen until cancelled; ready(port) once listening; with signals,
        report() on SIGUSR1 (the main thread's loop only)."""
        loop = asyncio.get_running_loop()
        if signals:
            loop.add_signal_handler(signal.SIGUSR1, self.report)
        server = await loop.create_server(self.client, host, port)
        ready(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()


def new_loop():
    """An event loop whose timers keep microseconds: select() takes a timeval,
    where epoll (asyncio's default) and libuv (uvloop) round to milliseconds,
    which would add up to 1 ms to each direction. select() watches at most
    1,024 descriptors: about 500 proxied connections, over twice what the
    benchmark's Postgres allows."""
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=parse_address, default=("127.0.0.1", 0))
    parser.add_argument("--upstream", type=parse_address, required=True)
    parser.add_argument("--delay", type=parse_delay, required=True, help="per round trip")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    def ready(port):
        print(f"delay_proxy listening on {args.listen[0]}:{port}", flush=True)

    server = ProxyServer(args.upstream, args.delay)
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(server.serve(*args.listen, ready, signals=True))
    except (KeyboardInterrupt, SystemExit):
        pass
    except OSError as error:
        sys.exit(f"delay_proxy: {error}")
    server.report()


class Launched:
    """The proxy as a process of its own in front of database_url's server,
    for the benchmark: a context manager. Its own process, so that its copying
    shares no interpreter with the harness (pin: a taskset CPU list)."""

    def __init__(self, database_url, delay, log, pin=None):
        self.database_url, self.delay, self.log, self.pin = database_url, delay, log, pin
        self.process = self.url = None

    def __enter__(self):
        parts = urlsplit(self.database_url)
        args = [
            sys.executable,
            "-m",
            "bench.sut.delay_proxy",
            f"--upstream={parts.hostname or '127.0.0.1'}:{parts.port or 5432}",
            f"--delay={self.delay * 1000:g}ms",
        ]
        self.process = subprocess.Popen(
            taskset(args, self.pin),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            start_new_session=True,  # a group of its own, for children.stop()
        )
        line = self.process.stdout.readline()
        if not line.startswith("delay_proxy listening on "):
            self.__exit__()
            raise OSError(f"the delay proxy did not start: {line.strip() or 'no output'}")
        port = int(line.rsplit(":", 1)[1])
        self.url = proxied_url(self.database_url, port)
        return self

    def counts(self):
        """The proxy's counts now: {"open", "peak", "total", "writes"}."""
        self.process.send_signal(signal.SIGUSR1)
        line = self.process.stdout.readline()
        counts = marked_json(line, MARKER)
        if counts is None:
            raise OSError(f"the delay proxy did not answer: {line.strip() or 'it stopped'}")
        return counts

    def __exit__(self, *exc):
        children.stop(self.process)
        self.process.stdout.close()


if __name__ == "__main__":
    main()
