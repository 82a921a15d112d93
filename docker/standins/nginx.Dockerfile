# Stand-in for nginx:1.22 (docker/standins/build.sh): Debian bookworm's
# nginx-light 1.22.1, run as the official image runs it. Its workers run as
# www-data (the official image's as nginx), and it has fewer modules.
ARG BASE
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx-light=1.22.* \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
    && ln -sf /dev/stdout /var/log/nginx/access.log \
    && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
# SIGQUIT: nginx's graceful shutdown, the official image's stop signal.
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
