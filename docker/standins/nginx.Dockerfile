# Stand-in for nginx:1.28.0 (docker/standins/build.sh), the maintained nginx
# compose.yaml and proxy/Dockerfile name: Debian bookworm's nginx-light
# 1.22.1 (its only nginx; Debian keeps it patched, nginx.org maintains 1.28),
# run as the official image runs it. The Docker tests run the door's config
# on this 1.22; a user's machine pulls nginx.org's 1.28 (docs/docker.md). Its
# workers run as www-data (the official image's as nginx), and it has fewer
# modules. openssl: the official image has it (through ca-certificates),
# compose.tls.yaml's first start makes its certificate with it.
ARG BASE
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx-light=1.22.* openssl=3.0.* \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
    && ln -sf /dev/stdout /var/log/nginx/access.log \
    && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
# SIGQUIT: nginx's graceful shutdown, the official image's stop signal.
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
