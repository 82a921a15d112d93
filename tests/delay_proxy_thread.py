"""The delay proxy (bench/sut/delay_proxy.py) in a thread of the test
process, for tests: `with DelayProxy(upstream, delay_s) as proxy:`
(proxy.port, proxy.url(database_url), proxy.connections())."""

import asyncio
import threading

from bench.sut.delay_proxy import ProxyServer, new_loop, proxied_url


class DelayProxy:
    """The proxy in a thread of this process, for tests: a context manager."""

    def __init__(self, upstream, delay, host="127.0.0.1", port=0):
        self.upstream, self.delay, self.host, self.port = upstream, delay, host, port
        self.loop = new_loop()
        self.started = threading.Event()
        self.server = ProxyServer(upstream, delay)
        self.task = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        self.task = self.loop.create_task(self.server.serve(self.host, self.port, self.ready))
        try:
            self.loop.run_until_complete(self.task)
        except (asyncio.CancelledError, OSError) as error:
            self.error = error
            self.started.set()
        finally:
            self.loop.close()

    def ready(self, port):
        self.port = port
        self.started.set()

    def url(self, database_url):
        return proxied_url(database_url, self.port, self.host)

    def connections(self):
        return self.server.connections()

    def __enter__(self):
        self.error = None
        self.thread.start()
        self.started.wait(10)
        if self.error is not None:
            raise OSError(f"delay proxy could not listen: {self.error}")
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(10)
