"""Ports on 127.0.0.1, for every server the project starts."""

import socket

DRAWS = 1000  # bind(0)'s tries for a port this process has not handed out

handed_out = set()


def free_port(port=0):
    """port if it is free on 127.0.0.1 (0: any free one this process has not
    handed out before); OSError if taken. A port handed out for a server not
    started yet is still free to bind(0): without the memory, a second server
    drawn before the first binds can get the same port, and one of them fails
    to start (as a rating source and the app under test once did)."""
    for _ in range(DRAWS):
        with socket.socket() as probe:
            if port:
                # A server restarting on its port: its closed connections, still
                # in TIME_WAIT, do not stop it (Postgres binds with SO_REUSEADDR).
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
            drawn = probe.getsockname()[1]
        if port or drawn not in handed_out:
            handed_out.add(drawn)
            return drawn
    raise OSError(f"no free port on 127.0.0.1 in {DRAWS} draws")
