# Stand-in for nginx:1.28.0 (docker/standins/build.sh), the maintained nginx
# compose.yaml and proxy/Dockerfile name: Debian's nginx-light 1.30 from
# forky (Debian testing), on the bookworm rootfs, run as the official image
# runs it. Not bookworm's own 1.22: the proxy's upstreams follow the apps'
# replicas with `resolve` (proxy/compose-apps.conf), which nginx has from
# 1.27.3, and no Debian release before forky packages such an nginx. apt
# takes from forky only what it is asked for and what that needs (its libc,
# libssl, libpcre2), nothing else of the rootfs moves. Its workers run as
# www-data (the official image's as nginx), and it has fewer modules.
# check-valid-until=no: testing's Release file says it expires a week after
# it was signed, and a mirror that keeps a snapshot serves it past that; its
# signature is still checked.
# openssl: the official image has it (through ca-certificates), compose.tls.yaml's
# first start makes its certificate with it.
ARG BASE
FROM ${BASE}
RUN sed -n 's/^deb \([^ ]*\) bookworm main$/deb [check-valid-until=no] \1 forky main/p' \
        /etc/apt/sources.list \
        > /etc/apt/sources.list.d/forky.list \
    && test -s /etc/apt/sources.list.d/forky.list \
    && printf 'Package: *\nPin: release n=forky\nPin-Priority: 100\n' > /etc/apt/preferences.d/forky \
    && apt-get update \
    && apt-get install -y --no-install-recommends -t forky nginx-light=1.30.* openssl=3.* \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
    && ln -sf /dev/stdout /var/log/nginx/access.log \
    && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
# SIGQUIT: nginx's graceful shutdown, the official image's stop signal.
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
