#!/usr/bin/env bash
# The system tools this project runs: each with the package that provides it
# and what needs it (TOOLS, below: adding a tool is adding its line). Installs
# those named that this machine lacks, in one apt-get call, or refuses in one
# sentence before anything is done. Run before any pip by ./benchmark.sh
# (bench/preflight.py names the tools its options need) and ./test.sh (every
# tool); with --check, by bench/cli.py. See usage(). Written for macOS' bash
# 3.2 too, where it can only refuse: no mapfile, no empty "${array[@]}".
set -Eeuo pipefail

# tool        Debian package     Homebrew  needed by (no apostrophe: the table is quoted with them)
TOOLS='
wrk           wrk                wrk       ./benchmark.sh: the load generator (all but --rate R,...)
nginx         nginx-light        nginx     ./benchmark.sh --proxy or --replicas, --serve APP --proxy
pgbouncer     pgbouncer          pgbouncer ./benchmark.sh --pgbouncer
taskset       util-linux         -         ./benchmark.sh --pin
docker        docker.io          -         ./test.sh: Docker Compose and Swarm, end to end
dockerd       docker.io          -         ./test.sh: the daemon they run on, started by the tests
iptables      iptables           -         ./test.sh: dockerd (an interrupted install can leave it out)
ip            iproute2           -         ./test.sh: three hosts in network namespaces
debootstrap   debootstrap        -         ./test.sh: the stand-in base images (docker/standins)
kubectl       kubernetes-client  kubectl   ./test.sh: kustomize renders deploy/k8s
patch         patch              -         ./test.sh: the migration guide steps (docs/migration)
chromium      chromium           -         ./test.sh: the results explorer in a headless browser
chromedriver  chromium-driver    -         ./test.sh: the driver Selenium runs that browser with
'
# Not in the table: Docker Compose v2 (`docker compose`), which no Debian
# package provides (bookworm's docker-compose is Compose v1, and it has no
# docker-compose-plugin): scripts/compose.sh links the pinned one of .venv as
# docker's plugin. Named here, it is refused with that command.
COMPOSE_NOTE="Compose v2 is no Debian package (bookworm's docker-compose is v1, and there is no docker-compose-plugin): run scripts/compose.sh"

# Where a tool is looked for: PATH, and the system folders a user's PATH may
# lack (nginx, pgbouncer, iptables and debootstrap are in /usr/sbin). The
# command, not the package: a machine may have kubectl from elsewhere.
SEARCH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

usage() {
    cat <<USAGE
Usage: scripts/system.sh [--check] TOOL...
       scripts/system.sh [--check] --all

Installs the TOOLs named (--all: every one, as ./test.sh does) that this
machine lacks: with apt-get (Debian, Ubuntu), as root or through sudo where
sudo needs no password. Otherwise, or on another system, it installs nothing
and names, in one line, the command to run. Quiet when every tool is there.
  --check   install nothing: exit 1 with that line if a tool is missing
Docker Compose v2 is not one of them: scripts/compose.sh.

Tools:
$(awk 'NF { printf "  %-12s ", $1; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, ""); print }' <<<"$TOOLS")
USAGE
}

# One column of a tool's line in TOOLS (2: its Debian package, 3: its Homebrew
# formula, 4: what needs it, to the end of the line); empty for another tool.
column() {
    awk -v tool="$1" -v field="$2" '$1 == tool {
        if (field == 4) { sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, ""); print } else print $field }' <<<"$TOOLS"
}

# Found: an executable file of that name in SEARCH (type -P alone also names
# a file that is not executable, when there is no other).
found() {
    local path
    path="$(PATH="$SEARCH" type -P "$1")" && [[ -f "$path" && -x "$path" ]]
}

# "a, b and c"
listed() {
    local all="$*"
    if (($# > 1)); then
        all="${*:1:$#-1}"
        all="${all// /, } and ${*: -1}"
    fi
    echo "$all"
}

# The one sentence that ends a run which cannot install the tools: the exact
# command that would, by whom it must be run.
refuse() {
    local command=(apt-get install -y "${packages[@]}") run
    if ! found apt-get; then
        local formulas=() others=() tool
        for tool in "${missing[@]}"; do
            if [[ "$(column "$tool" 3)" == - ]]; then
                others+=("$tool")
            else
                formulas+=("$(column "$tool" 3)")
            fi
        done
        if [[ "$(uname -s)" == Darwin && ${#formulas[@]} -gt 0 ]]; then
            run="brew install ${formulas[*]}${others[*]:+ ($(listed "${others[@]}"): no Homebrew formula known)}"
        else
            run="this system's equivalent of Debian's ${command[*]}"
        fi
    elif ((EUID == 0)); then
        run="${command[*]}"
    elif found sudo; then
        run="sudo ${command[*]}"
    else
        run="su -c '${command[*]}'"
    fi
    echo "missing $(listed "${missing[@]}"): run $run, then this command again" >&2
    exit 1
}

# A command as root (via: nothing, or sudo -n), printed first; its output
# goes to log, shown if the install fails.
as_root() {
    local command=(${via[@]+"${via[@]}"} env DEBIAN_FRONTEND=noninteractive "$@")
    echo "+ ${command[*]}" >&2
    "${command[@]}" >>"$log" 2>&1
}

# apt-get waits for another's lock (two first runs at once) rather than failing.
apt_get() {
    as_root apt-get -q -y -o DPkg::Lock::Timeout=120 "$@"
}

# The end of a failed apt-get: its output's tail, then one line.
failed() {
    tail -n 20 "$log" >&2
    echo "system.sh: $* failed (its output above)" >&2
    exit 1
}

install() {
    log="$(mktemp)"
    trap 'rm -f "$log"' EXIT
    local install=(install --no-install-recommends "${packages[@]}")
    # The package lists are fetched only when there are none (a fresh
    # container), or after an install failed: they were stale, or an earlier
    # install was interrupted (dpkg --configure -a finishes it first).
    if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
        apt_get update || failed apt-get update
    fi
    if ! apt_get "${install[@]}"; then
        as_root dpkg --configure -a || true
        apt_get update || failed apt-get update
        apt_get "${install[@]}" || failed apt-get "${install[@]}"
    fi
}

main() {
    local check=0 tools=() tool package
    while (($#)); do
        case "$1" in
            --check) check=1 ;;
            --all) while read -r tool; do tools+=("$tool"); done < <(awk 'NF { print $1 }' <<<"$TOOLS") ;;
            -h | --help) usage; exit 0 ;;
            -*) usage >&2; exit 2 ;;
            compose | docker-compose)
                echo "system.sh: $COMPOSE_NOTE" >&2
                exit 2 ;;
            *)
                if [[ -z "$(column "$1" 2)" ]]; then
                    echo "system.sh: no tool $1 in its table (--help lists them)" >&2
                    exit 2
                fi
                tools+=("$1") ;;
        esac
        shift
    done
    ((${#tools[@]})) || exit 0
    # Each once, in order: a tool named twice, a package that provides two.
    missing=() packages=()
    for tool in "${tools[@]}"; do
        if found "$tool" || [[ " ${missing[*]:-} " == *" $tool "* ]]; then
            continue
        fi
        missing+=("$tool")
        package="$(column "$tool" 2)"
        [[ " ${packages[*]:-} " == *" $package "* ]] || packages+=("$package")
    done
    ((${#missing[@]})) || exit 0
    via=()
    if ((check)) || ! found apt-get; then
        refuse
    elif ((EUID != 0)); then
        if ! found sudo || ! sudo -n true 2>/dev/null; then
            refuse
        fi
        via=(sudo -n)
    fi
    echo "system.sh: installing what this machine lacks:" >&2
    for tool in "${missing[@]}"; do
        printf '  %-12s (%s) for %s\n' "$tool" "$(column "$tool" 2)" "$(column "$tool" 4)" >&2
    done
    install
    for tool in "${missing[@]}"; do
        if ! found "$tool"; then
            echo "system.sh: $(column "$tool" 2) is installed and still no $tool is found" >&2
            exit 1
        fi
    done
}

main "$@"
