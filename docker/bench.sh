#!/bin/sh
# The bench service's entrypoint (compose.yaml):
#
#     docker compose run --rm bench APP [./benchmark.sh options]
#
# measures APP's container, already running in the stack, with ./benchmark.sh
# --target: the same wrk scripts and report as a local run. With the database
# URL it also measures pgbench's ceiling and checks that no review was lost;
# the reviews it writes go to a film of its own, removed with them at its end
# (docs/benchmark.md: no other row is written or deleted).
set -eu
app="${1:?usage: docker compose run --rm bench APP [options], APP: flask, quart, sanic or falcon}"
shift
exec ./benchmark.sh "$app" --target "http://$app:8000" --database-url "$DATABASE_URL" "$@"
