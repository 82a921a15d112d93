#!/usr/bin/env bash
# Make .venv with the pinned dependencies, or bring it up to date with a
# requirements file: requirements.txt unless another is named, e.g.
# `bash scripts/venv.sh requirements-dev.txt` (what test.sh adds). Run by
# benchmark.sh, test.sh and the Dockerfile; quiet when nothing to do.
set -Eeuo pipefail

venv_dir="${VENV_DIR:-.venv}"
requirements="${1:-requirements.txt}"
stamp="$venv_dir/.$(basename "$requirements" .txt).sha256"
wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"

if [[ ! -x "$venv_dir/bin/python" ]]; then
    echo "Creating $venv_dir ..." >&2
    python3 -m venv "$venv_dir"
fi
if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    echo "Installing pinned dependencies from $requirements into $venv_dir ..." >&2
    "$venv_dir/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
    echo "$wanted" > "$stamp"
fi
