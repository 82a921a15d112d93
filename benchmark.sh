#!/usr/bin/env bash
# Serve or measure one of the four apps. See usage().
set -Eeuo pipefail
cd "$(dirname "$0")"

usage() {
    cat <<'USAGE'
Usage:
  ./benchmark.sh --serve APP [--port N]   serve APP until Ctrl-C

APP is one of: flask.
Uses DATABASE_URL if set, else a throwaway Postgres in .pgdata/.
USAGE
}

app="" port=8000 mode=""
while (($#)); do
    case "$1" in
        --serve) mode=serve; app="${2:?--serve needs an app}"; shift 2 ;;
        --port) port="${2:?--port needs a number}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done

bash scripts/venv.sh
case "$mode" in
    serve) exec .venv/bin/python -m tools.serve "$app" --port "$port" ;;
    *) usage >&2; exit 2 ;;
esac
