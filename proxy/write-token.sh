#!/bin/sh
# Writes the nginx map that refuses a POST without the write token:
#
#   sh proxy/write-token.sh TOKEN_FILE OUTPUT [COMMAND...]
#
# TOKEN_FILE holds the token (one line; the generated secrets' write_token).
# A door meant to be shut fails shut: when TOKEN_FILE does not exist, this
# refuses to start (one line, exit 2), unless WRITES_OPEN=1 says in so many
# words that every write may pass (a benchmark's own nginx, tools/proxy.py).
# Then COMMAND, when given, replaces it (nginx in the foreground: compose's
# proxy). Run by tools/proxy.py, by compose's
# proxies (compose.yaml, tls-start.sh), and by the proxy image's entrypoint
# (proxy/Dockerfile: WRITE_TOKEN_FILE, default /run/secrets/write_token) in
# Kubernetes. The token is checked here, not by the apps: they stay the same
# code in every deployment.
set -eu

token_file="${1:-${WRITE_TOKEN_FILE:-/run/secrets/write_token}}"
output="${2:-${WRITE_TOKEN_CONF:-/tmp/nginx/write-token.conf}}"
open="${WRITES_OPEN:-}"
case "$open" in
    '' | 0 | 1) ;;
    *)
        echo "write-token.sh: WRITES_OPEN=$open: 1 lets writes through without a token, 0 or unset needs one" >&2
        exit 2
        ;;
esac
mkdir -p "$(dirname "$output")"
umask 077
if [ ! -e "$token_file" ]; then
    if [ "$open" != 1 ]; then
        echo "write-token.sh: no $token_file: not started (give the proxy the write_token secret, or set WRITES_OPEN=1 to let every write through)" >&2
        exit 2
    fi
    printf 'map $http_authorization $door_token_ok {\n    default 1;\n}\n' >"$output"
    echo "write-token.sh: WRITES_OPEN=1 and no $token_file: writes need no token" >&2
else
    token="$(tr -d '\r\n' <"$token_file")"
    # Only characters nginx takes in a quoted string unchanged, and enough of them.
    case "$token" in
        *[!A-Za-z0-9._~+/=-]* | '')
            echo "write-token.sh: $token_file: the token must be 32 to 128 of A-Z a-z 0-9 . _ ~ + / = -" >&2
            exit 2
            ;;
    esac
    if [ "${#token}" -lt 32 ] || [ "${#token}" -gt 128 ]; then
        echo "write-token.sh: $token_file: the token must be 32 to 128 of A-Z a-z 0-9 . _ ~ + / = -" >&2
        exit 2
    fi
    # A regular expression, not a string: nginx matches a map's strings
    # ignoring case, its "~" expressions with it, so the token's letters must
    # match as they are (the scheme's may not: RFC 9110). "." and "+" are the
    # token's only characters special in one, each a class of its own here.
    pattern="$(printf '%s' "$token" | sed 's/[.+]/[&]/g')"
    cat >"$output" <<CONF
map \$http_authorization \$door_token_ok {
    default 0;
    "~^(?i:bearer) $pattern\$" 1;
}
CONF
    echo "write-token.sh: writes need the token of $token_file" >&2
fi
if [ "$#" -gt 2 ]; then
    shift 2
    umask 022
    exec "$@"
fi
