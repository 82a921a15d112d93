#!/bin/sh
# compose.tls.yaml's proxy: before nginx, a certificate on first start and the
# write token's map, then the command (nginx in the foreground).
#
#   TLS_DIR           where tls.crt and tls.key are (/etc/nginx/tls: the
#                     stack's .secrets/tls/); made here when missing, a
#                     self-signed pair for TLS_NAME (localhost) and 127.0.0.1
#   WRITE_TOKEN_FILE  the write token (/run/secrets/write_token: a Docker
#                     secret); without it nginx does not start, unless
#                     WRITES_OPEN=1 (proxy/write-token.sh)
#   WRITE_TOKEN_CONF  where its map goes (/tmp/nginx/write-token.conf)
set -eu

dir="${TLS_DIR:-/etc/nginx/tls}"
name="${TLS_NAME:-localhost}"
if [ ! -s "$dir/tls.crt" ] || [ ! -s "$dir/tls.key" ]; then
    umask 077
    # The proxy's root holds no capability over another user's files
    # (compose.tls.yaml): a folder it does not own and may not write stops it.
    if ! { mkdir -p "$dir" && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
        -nodes -days 365 -subj "/CN=$name" -addext "subjectAltName=DNS:$name,IP:127.0.0.1" \
        -keyout "$dir/tls.key" -out "$dir/tls.crt"; } 2>/dev/null; then
        echo "tls-start.sh: cannot write a certificate into $dir (.secrets/tls/): put tls.crt and tls.key there, readable by the container's root, or remove the folder" >&2
        exit 2
    fi
    chmod 644 "$dir/tls.crt"  # public: curl --cacert reads it on the host
    echo "tls-start.sh: made a self-signed certificate for $name in .secrets/tls/ (put yours there instead)" >&2
fi
exec sh "$(dirname "$0")/write-token.sh" "${WRITE_TOKEN_FILE:-/run/secrets/write_token}" \
    "${WRITE_TOKEN_CONF:-/tmp/nginx/write-token.conf}" "$@"
