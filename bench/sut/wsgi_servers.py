"""The WSGI servers that have no command of their own, for bench/sut/servers.py.

    python -m bench.sut.wsgi_servers tornado|twisted|wsgiref MODULE:FACTORY \
        HOST PORT WORKERS [THREADS]

The app is built by calling FACTORY in each serving process (after any fork),
as gunicorn builds one per worker. SIGTERM stops the server.
"""

import importlib
import signal
import sys


def build(target):
    module, factory = target.split(":")
    return getattr(importlib.import_module(module), factory)()


def tornado(target, host, port, workers, threads):
    """Tornado's WSGIContainer; `workers` processes forked on one socket, each
    running the app on its IOLoop, one request at a time."""
    import asyncio

    from tornado import httpserver, netutil, process, wsgi

    sockets = netutil.bind_sockets(port, host)
    if workers > 1:
        process.fork_processes(workers, max_restarts=100)

    async def serve():
        server = httpserver.HTTPServer(wsgi.WSGIContainer(build(target)))
        server.add_sockets(sockets)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        server.stop()

    asyncio.run(serve())


def twisted(target, host, port, workers, threads):
    """Twisted's WSGIResource: one reactor, requests on its thread pool."""
    from twisted.internet import reactor
    from twisted.web import server, wsgi

    reactor.suggestThreadPoolSize(threads)
    resource = wsgi.WSGIResource(reactor, reactor.getThreadPool(), build(target))
    reactor.listenTCP(port, server.Site(resource), interface=host, backlog=2048)
    reactor.run()  # the reactor stops itself on SIGTERM


def wsgiref(target, host, port, workers, threads):
    """The standard library's reference server: one request at a time."""
    from wsgiref import simple_server

    class Quiet(simple_server.WSGIRequestHandler):
        def log_message(self, *args):
            pass  # no access log, as with the other servers

    httpd = simple_server.make_server(host, port, build(target), handler_class=Quiet)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()


SERVERS = {"tornado": tornado, "twisted": twisted, "wsgiref": wsgiref}


def main(argv):
    if len(argv) < 5 or argv[0] not in SERVERS:
        sys.exit(__doc__)
    name, target, host, port, workers, *rest = argv
    threads = int(rest[0]) if rest and rest[0] else 1
    sys.path.insert(0, ".")  # the apps' packages, from the project folder
    SERVERS[name](target, host, int(port), int(workers), threads)


if __name__ == "__main__":
    main(sys.argv[1:])
