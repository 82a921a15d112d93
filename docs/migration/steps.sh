#!/usr/bin/env bash
# The migration's four steps (docs/migration.md), and the two alternatives of
# docs/examples/, as working trees, and back to patches.
#
#   bash docs/migration/steps.sh expand DIR   # the trees below, in DIR
#   bash docs/migration/steps.sh diff DIR     # rewrite the patches from them
#   bash docs/migration/steps.sh serve N [--port 8000]
#                                             # step N (0 to 4), served until Ctrl-C
#   bash docs/migration/steps.sh apps DIR     # steps 1 to 3 as apps the harness
#                                             # measures: APPS_PATH=DIR ./benchmark.sh
#                                             # flask step1 step2 step3 quart ...
#
# expand: DIR/step0/quart_app is a copy of flask_app/; each DIR/stepN/quart_app
# is step N-1's with docs/migration/stepN.patch applied. DIR/flask-async and
# DIR/quart-psycopg are flask_app/ (renamed for the second), DIR/quart-httpx
# is quart_app/, each with docs/examples/<name>.patch applied, beside the
# untouched copy <name>.orig.
# DIR must be empty or new: expand refuses a used one (a tree edited there
# would be lost, or patched twice). Edit those trees (say, after flask_app/ or
# quart_app/ changed), then `diff` writes the patches back from them. tests/docs/test_migration_steps.py checks
# that step4 is quart_app/, and runs the contract suite against the others.
set -Eeuo pipefail

usage() {
    cat <<USAGE
usage: $0 expand DIR | diff DIR | serve STEP [--port N] | apps DIR
USAGE
    exit 2
}

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
examples="$root/docs/examples"
steps=(1 2 3 4)
# example name, the app it starts from, and the package name that app takes in it
alternatives=(
    "flask-async flask_app flask_app"
    "quart-psycopg flask_app quart_psycopg"
    "quart-httpx quart_app quart_app"
)

copy_app() {
    mkdir -p "$1"
    cp -R "$root/$2" "$1/$3"
    rm -rf "$1/$3/__pycache__"
}

apply() {
    patch --quiet --batch --forward -p1 -d "$1" < "$2"
}

# Each function's loop variables are its own locals: bash scopes dynamically,
# so a loop's `step` would otherwise overwrite the caller's (serve's step N).
expand() {
    local dir="$1" step name base package
    if [[ -e "$dir" && -n "$(ls -A "$dir")" ]]; then
        echo "$0 expand: $dir is not empty (expanded before?): name a new or empty folder" >&2
        exit 1
    fi
    copy_app "$dir/step0" flask_app quart_app
    for step in "${steps[@]}"; do
        cp -R "$dir/step$((step - 1))" "$dir/step$step"
        apply "$dir/step$step" "$here/step$step.patch"
    done
    for alternative in "${alternatives[@]}"; do
        read -r name base package <<< "$alternative"
        copy_app "$dir/$name.orig" "$base" "$package"
        cp -R "$dir/$name.orig" "$dir/$name"
        apply "$dir/$name" "$examples/${name//-/_}.patch"
    done
}

# A unified diff with neither timestamps nor `diff` command lines: the same
# text whenever it is regenerated, applied with `patch -p1`.
write_diff() {
    local dir="$1" old="$2" new="$3" patch_file="$4"
    (
        cd "$dir"
        diff -ruN -x __pycache__ "$old" "$new" || [[ $? -eq 1 ]]
    ) | sed -E -e '/^diff /d' -e 's/^((---|\+\+\+) [^\t]+)\t.*$/\1/' > "$patch_file"
}

write_diffs() {
    local dir="$1" step name base package
    for step in "${steps[@]}"; do
        write_diff "$dir" "step$((step - 1))" "step$step" "$here/step$step.patch"
    done
    for alternative in "${alternatives[@]}"; do
        read -r name base package <<< "$alternative"
        write_diff "$dir" "$name.orig" "$name" "$examples/${name//-/_}.patch"
    done
}

# serve: step N expanded in a temporary folder and served by its own serve.sh
# (tools/serve.py --tree), on DATABASE_URL or a Postgres of the project's own
# with the sample data, as ./benchmark.sh --serve serves an app. Ctrl-C,
# SIGTERM or SIGHUP stops the server and its database and removes the folder.
serve() {
    local step="$1" child status=0
    shift
    if [[ ! "$step" =~ ^[0-4]$ ]]; then
        echo "$0 serve: the step is 0, 1, 2, 3 or 4, not '$step'" >&2
        exit 2
    fi
    served="$(mktemp -d)"  # not local: the EXIT trap runs after serve returns
    trap 'rm -rf "$served"' EXIT
    expand "$served"
    cd "$root"
    bash scripts/venv.sh
    # In the background, so that this shell can pass a signal on (a background
    # job ignores Ctrl-C's SIGINT: the trap sends SIGTERM), then wait for it.
    .venv/bin/python -m tools.serve quart --tree "$served/step$step" "$@" &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null || true' INT TERM HUP
    while kill -0 "$child" 2>/dev/null; do
        wait "$child" || status=$?
    done
    return "$status"
}

# apps: steps 1 to 3, each an app of its own (DIR/stepN_app, infra/apps.py),
# named stepN, for the harness (APPS_PATH=DIR): step 0 is flask_app, step 4
# quart_app. How each asks its rating sources, for the report: steps 1 and 2
# keep Flask's sync view (one after another), step 3 asks them at once.
apps() {
    local dir="$1" step fan_outs=(sequential sequential concurrent)
    expand "$dir/trees"
    for step in 1 2 3; do
        cp -R "$dir/trees/step$step/quart_app" "$dir/step${step}_app"
        sed -i "s/quart_app/step${step}_app/g" "$dir/step${step}_app/serve.sh" "$dir/step${step}_app/__init__.py"
        sed -i -e "s/^name = .*/name = \"step$step\"/" -e "s/^order = .*/order = $((10 + step))/" \
            -e "s/^framework = .*/framework = \"Quart, step $step of docs\/migration.md\"/" \
            "$dir/step${step}_app/app.toml"
        printf 'packages = ["quart"]\nfan_out = "%s"\n' "${fan_outs[step - 1]}" >> "$dir/step${step}_app/app.toml"
    done
    rm -rf "$dir/trees"
    echo "APPS_PATH=$dir ./benchmark.sh flask step1 step2 step3 quart ..."
}

case "${1:-}" in
    expand) [[ $# -eq 2 ]] || usage; expand "$2" ;;
    diff) [[ $# -eq 2 ]] || usage; write_diffs "$2" ;;
    serve) [[ $# -ge 2 ]] || usage; shift; serve "$@" ;;
    apps) [[ $# -eq 2 ]] || usage; apps "$2" ;;
    *) usage ;;
esac
