"""Ports on 127.0.0.1, for every server the project starts."""

import socket


def free_port(port=0):
    """port if it is free on 127.0.0.1 (0: any free one); OSError if taken."""
    with socket.socket() as probe:
        if port:
            # A server restarting on its port: its closed connections, still in
            # TIME_WAIT, do not stop it (Postgres binds with SO_REUSEADDR).
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
        return probe.getsockname()[1]
