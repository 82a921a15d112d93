"""The upstream (upstream/server.py) in a thread of the test process, for the
fast tier: `with UpstreamThread(["0", "0"], "10ms") as upstream:` (upstream.urls,
upstream.stats()). The same Service that `python -m upstream` serves, on its
own event loop; tests/harness/test_upstream.py runs the command itself. Its CPU
figures are the whole test process's: only the command's are its own."""

import asyncio
import json
import threading

import uvloop

from infra.delays import parse_jittered
from upstream.server import Service


class UpstreamThread:
    def __init__(self, ports, delay="0", host="127.0.0.1"):
        self.ports, self.host = [int(port) for port in ports], host
        self.service = Service(parse_jittered(delay))
        self.loop = uvloop.new_event_loop()
        self.urls = []
        self.listening = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        try:
            self.loop.run_until_complete(self.listen())
        except OSError as error:
            self.error = error
            self.listening.set()
            return
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.service.close())
            self.loop.run_until_complete(asyncio.sleep(0))  # connection_lost, each
            self.loop.close()

    async def listen(self):
        for port in self.ports:
            self.urls.append(f"http://{self.host}:{await self.service.listen(self.host, port)}")
        self.listening.set()

    def stats(self):
        """What GET /stats would answer, read on the service's own loop."""
        future = asyncio.run_coroutine_threadsafe(self.read_stats(), self.loop)
        return json.loads(future.result(5))

    async def read_stats(self):
        return self.service.stats_body()

    def __enter__(self):
        self.thread.start()
        self.listening.wait(10)
        if self.error is not None:
            raise OSError(f"the upstream could not listen: {self.error}")
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
