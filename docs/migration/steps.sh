#!/usr/bin/env bash
# The migration's four steps (docs/migration.md) as working trees, and back.
#
#   bash docs/migration/steps.sh expand DIR   # DIR/step0 ... DIR/step4
#   bash docs/migration/steps.sh diff DIR     # rewrite step1.patch ... step4.patch
#
# expand: DIR/step0/quart_app is a copy of flask_app/; each DIR/stepN/quart_app
# is step N-1's with docs/migration/stepN.patch applied. Edit those trees (say,
# after flask_app/ or quart_app/ changed), then `diff` writes the patches back
# from them. tests/test_migration_steps.py checks that step4 is quart_app/.
set -Eeuo pipefail

usage() {
    cat <<USAGE
usage: $0 expand DIR | diff DIR
USAGE
    exit 2
}

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
steps=(1 2 3 4)

expand() {
    local dir="$1"
    mkdir -p "$dir/step0"
    cp -R "$root/flask_app" "$dir/step0/quart_app"
    rm -rf "$dir/step0/quart_app/__pycache__"
    for step in "${steps[@]}"; do
        cp -R "$dir/step$((step - 1))" "$dir/step$step"
        patch --quiet --batch --forward -p1 -d "$dir/step$step" < "$here/step$step.patch"
    done
}

# A unified diff with neither timestamps nor `diff` command lines: the same
# text whenever it is regenerated, applied with `patch -p1`.
write_diff() {
    local dir="$1" step="$2"
    (
        cd "$dir"
        diff -ruN -x __pycache__ "step$((step - 1))" "step$step" || [[ $? -eq 1 ]]
    ) | sed -E -e '/^diff /d' -e 's/^((---|\+\+\+) [^\t]+)\t.*$/\1/' > "$here/step$step.patch"
}

[[ $# -eq 2 ]] || usage
case "$1" in
    expand) expand "$2" ;;
    diff) for step in "${steps[@]}"; do write_diff "$2" "$step"; done ;;
    *) usage ;;
esac
