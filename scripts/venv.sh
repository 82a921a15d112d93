#!/usr/bin/env bash
# Make .venv with the pinned dependencies, or bring it up to date with
# requirements files: requirements.txt unless others are named, e.g.
# `bash scripts/venv.sh requirements.txt requirements-charts.txt` (what
# benchmark.sh installs). Run by benchmark.sh, test.sh, bench/sut/extras.py
# and the Dockerfile; quiet when nothing to do.
#
# Every file out of date goes into ONE pip call, with --no-deps and
# --no-compile: each file is a lock file, closed over requirements.txt (it pins
# everything its section pulls in, tests/harness/test_harness.py checks that), so pip
# has no resolving to do, and one call pays pip's start-up and index reads
# once. The .pyc files are written as modules are first imported instead.
# Each file keeps its own stamp, so a run that needs one more file later
# (bench/sut/extras.py) installs that file alone.
#
# REQUIRE_HASHES=1 (the Dockerfile): each file is installed from its copy in
# requirements-hashed/ (python -m tools.hashes), pip --require-hashes: a
# wheel whose sha256 is not the one recorded is refused. The stamp is the
# file's own, so that benchmark.sh's later call in the container has nothing
# to do.
#
# Safe to run concurrently (four `./benchmark.sh --serve APP` started at once
# on a fresh clone): one run at a time creates or updates the venv, under an
# exclusive lock on a file beside it; the others wait, then find the stamps
# written and have nothing to do.
set -Eeuo pipefail

venv_dir="${VENV_DIR:-.venv}"
if (($# == 0)); then
    set -- requirements.txt
fi

stamp() {
    echo "$venv_dir/.$(basename "$1" .txt).sha256"
}

# The files named whose stamp is not their current hash, in the array stale.
find_stale() {
    stale=()
    local file
    for file in "$@"; do
        if [[ ! -x "$venv_dir/bin/python" ||
            "$(cat "$(stamp "$file")" 2>/dev/null)" != "$(sha256sum "$file" | cut -d' ' -f1)" ]]; then
            stale+=("$file")
        fi
    done
}

# The usual case, and what a container's run does: nothing to change, no lock.
find_stale "$@"
if ((${#stale[@]} == 0)); then
    exit 0
fi

# flock(2) through python3, which this script needs anyway (flock(1) is not on
# macOS): the lock belongs to the open file on descriptor 9, which this shell
# keeps until it exits, so it outlives the python3 that took it.
exec 9>"${venv_dir%/}.lock"
# -S and SIGINT's default: a Ctrl-C while it waits ends it quietly, no traceback.
python3 -S -c 'import fcntl, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); fcntl.flock(9, fcntl.LOCK_EX)'
# Another run may have done the work while this one waited.
find_stale "$@"
if ((${#stale[@]} == 0)); then
    exit 0
fi
if [[ ! -x "$venv_dir/bin/python" ]]; then
    echo "Creating $venv_dir ..." >&2
    python3 -m venv "$venv_dir"
fi
echo "Installing pinned dependencies from ${stale[*]} into $venv_dir ..." >&2
files=()
for file in "${stale[@]}"; do
    if [[ "${REQUIRE_HASHES:-}" == 1 ]]; then
        files+=(--require-hashes -r "requirements-hashed/$(basename "$file")")
    else
        files+=(-r "$file")
    fi
done
"$venv_dir/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-compile "${files[@]}"
for file in "${stale[@]}"; do
    sha256sum "$file" | cut -d' ' -f1 >"$(stamp "$file")"
done
