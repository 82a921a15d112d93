# Stand-in for python:3.11-slim-bookworm (docker/standins/build.sh): Debian's
# own Python 3.11 on a minbase bookworm, where the official image has a
# CPython built from source in /usr/local. pip installs from the wheelhouse
# build.sh made from requirements.txt on the host, never from an index.
ARG BASE
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        python3=3.11.* python3-venv=3.11.* python3-pip=23.0.* python-is-python3=3.11.* \
    && rm -rf /var/lib/apt/lists/*
COPY wheels/ /wheels/
ENV LANG=C.UTF-8 \
    PIP_NO_INDEX=1 \
    PIP_FIND_LINKS=/wheels
CMD ["python3"]
