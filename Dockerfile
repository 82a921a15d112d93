# One image for the four apps: compose.yaml picks the app by its command,
# `sh <app>_app/serve.sh`, the command the tests and ./benchmark.sh run too.
#
#   target app     (the default) what the app services run
#   target bench   the same plus wrk, for: docker compose run --rm bench APP
# checkov:skip=CKV_DOCKER_2:one image, four apps on different commands and ports: compose's healthcheck and Kubernetes' probes check each
FROM python:3.11-slim-bookworm AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/app/.venv/bin:$PATH
WORKDIR /app

# The pinned dependencies, installed by the script ./test.sh and ./benchmark.sh
# use, in a layer rebuilt only when they change, each wheel checked against
# its recorded sha256 (requirements-hashed/, pip --require-hashes). Its stamp
# file makes benchmark.sh's own call to it a no-op in the container.
COPY requirements.txt ./
COPY requirements-hashed/requirements.txt requirements-hashed/
COPY scripts/venv.sh scripts/
RUN REQUIRE_HASHES=1 bash scripts/venv.sh

# The project, less what .dockerignore leaves out, owned by root: the app
# cannot change its own code. results/ is where the bench writes.
COPY . .
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home app \
    && install -d -o app -g app results

# app before bench: the classic builder (no BuildKit) builds every stage up to
# its target, so this order keeps wrk out of the apps' build.
FROM base AS app
USER 10001:10001
EXPOSE 8000

FROM base AS bench
RUN apt-get update \
    && apt-get install -y --no-install-recommends wrk=4.1.0-3* \
    && rm -rf /var/lib/apt/lists/*
# What benchmark.sh would install on its first run and the app user cannot:
# the report's charts and the open-loop generator's histograms.
RUN REQUIRE_HASHES=1 bash scripts/venv.sh requirements-charts.txt requirements-openloop.txt
# The user has no home: matplotlib (the report's chart) caches its config here.
ENV MPLCONFIGDIR=/tmp/matplotlib
USER 10001:10001
