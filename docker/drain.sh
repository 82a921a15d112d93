#!/bin/sh
# An app's command in a Swarm stack (tools/stack.py): runs "$@" (its serve.sh)
# as a child and, on SIGTERM or SIGINT, keeps it serving DRAIN_SECONDS more
# before passing the signal on. Swarm takes a stopping task out of DNS, but
# the proxy caches the name for 5 s (proxy/compose-apps.conf): requests keep coming
# meanwhile, and a server that stopped at once would refuse them, or reset a
# connection it had accepted but not yet read (uvicorn does). Kubernetes'
# preStop sleep does the same (deploy/k8s). The server's own graceful stop
# follows: stop_grace_period must cover both.
set -eu
"$@" &
child=$!
drain() {
    sleep "${DRAIN_SECONDS:-7}"
    kill -TERM "$child" 2>/dev/null || true
}
trap drain TERM INT
status=0
wait "$child" || status=$?
# A trapped signal ends the first wait once drain() is done: wait for the exit.
if kill -0 "$child" 2>/dev/null; then
    status=0
    wait "$child" || status=$?
fi
exit "$status"
