"""The build cache the Docker modules share (tests/docker_host.py, CACHE)."""

import pytest

from tests.docker_host import cached, docker_daemon, keep_as_cache, run


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory):
    """keep(env, project): a module's images kept as the next module's build
    cache; at the session's end they are removed, and the layers only they
    held with them."""
    envs = []

    def keep(env, project):
        keep_as_cache(env, project)
        envs.append(env)

    yield keep
    if envs:
        env = envs[-1]
        with docker_daemon(env, tmp_path_factory.mktemp("build-cache")):
            if cached(env):
                run(["docker", "image", "rm", *cached(env)], env)
            assert cached(env) == []
