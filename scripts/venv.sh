#!/usr/bin/env bash
# Make .venv with the pinned dependencies, or bring it up to date with
# requirements.txt. Sourced by benchmark.sh and test.sh; quiet when nothing to do.
set -Eeuo pipefail

venv_dir="${VENV_DIR:-.venv}"
stamp="$venv_dir/.requirements.sha256"
wanted="$(sha256sum requirements.txt | cut -d' ' -f1)"

if [[ ! -x "$venv_dir/bin/python" ]]; then
    echo "Creating $venv_dir ..." >&2
    python3 -m venv "$venv_dir"
fi
if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    echo "Installing pinned dependencies into $venv_dir ..." >&2
    "$venv_dir/bin/pip" install --quiet --disable-pip-version-check -r requirements.txt
    echo "$wanted" > "$stamp"
fi
