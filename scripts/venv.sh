#!/usr/bin/env bash
# Make .venv with the pinned dependencies, or bring it up to date with a
# requirements file: requirements.txt unless another is named, e.g.
# `bash scripts/venv.sh requirements-dev.txt` (what test.sh adds). Run by
# benchmark.sh, test.sh and the Dockerfile; quiet when nothing to do.
#
# Safe to run concurrently (four `./benchmark.sh --serve APP` started at once
# on a fresh clone): one run at a time creates or updates the venv, under an
# exclusive lock on a file beside it; the others wait, then find the stamp
# written and have nothing to do.
set -Eeuo pipefail

venv_dir="${VENV_DIR:-.venv}"
requirements="${1:-requirements.txt}"
stamp="$venv_dir/.$(basename "$requirements" .txt).sha256"
wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"

up_to_date() {
    [[ -x "$venv_dir/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "$wanted" ]]
}

# The usual case, and what a container's run does: nothing to change, no lock.
if up_to_date; then
    exit 0
fi

# flock(2) through python3, which this script needs anyway (flock(1) is not on
# macOS): the lock belongs to the open file on descriptor 9, which this shell
# keeps until it exits, so it outlives the python3 that took it.
exec 9>"${venv_dir%/}.lock"
python3 -c 'import fcntl; fcntl.flock(9, fcntl.LOCK_EX)'
# Another run may have done the work while this one waited.
if up_to_date; then
    exit 0
fi
if [[ ! -x "$venv_dir/bin/python" ]]; then
    echo "Creating $venv_dir ..." >&2
    python3 -m venv "$venv_dir"
fi
echo "Installing pinned dependencies from $requirements into $venv_dir ..." >&2
"$venv_dir/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
echo "$wanted" >"$stamp"
