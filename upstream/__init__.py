"""The ratings service that GET /films/<film_id>/ratings/ fans out to: a small
upstream of the project's own, started like its other parts.

    python -m upstream --port 9001 --port 9002 --delay 50ms~10ms [--host 127.0.0.1]

One process, one event loop (uvloop), listening on every port given: each port
is one rating source of UPSTREAM_FANOUT. It answers

    GET /films/<film_id>/rating   after the delay (50 ms give or take 10,
                                  uniformly): 200 {"film_id", "rating"}, the
                                  rating a number from 1 to 5, fixed for a film
                                  and a port; 404 for a path that names no film
    GET /stats                    at once: what it has done (server.Stats)

It must never be the bottleneck of what it serves: it reports its own CPU
time per answer (GET /stats), and says so on stderr when it saturates (a
second in which its loop ran late or it used most of a core), counted in
/stats' saturated_seconds. It prints "upstream listening on URL ..." once
every port accepts connections, and stops on SIGTERM or Ctrl-C.
"""
