"""Nothing secret enters an image, whatever sits in the checkout.

A copy of the project as a clone has it, plus what a user's checkout may hold
beside it: the stack's secrets as `python3 -m tools.secrets` writes them
(.secrets/), a .env, TLS keys, each with a marker of its own. The app image is
built from that copy (the Dockerfile the stack, the bench and the proxy use:
one build context, .dockerignore's allow-list), saved with `docker save`, and
every file of every layer is read: neither a planted name nor a marker may be
anywhere. The fast check holds .dockerignore's rules against the same names.
"""

import os
import secrets
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.docker_host import (
    build_context_rules,
    build_standins,
    docker_daemon,
    exclusive,
    images,
    left_out,
    remove_new_images,
    run,
)
from tests.system_tools import system_tool
from tools import ROOT
from tools import secrets as stack_secrets

# Beside the generated .secrets/: where else a secret may sit in a checkout.
PLANTED = [
    ".env",
    ".env.production",
    "server.key",
    "tls/cert.pem",
    "flask_app/.env",
    "common/dev.key",
    "proxy/tls.key",
    "bench/.secrets/planted_token",
    ".secrets/tls/tls.key",  # the TLS profile's (proxy/tls-start.sh writes it there)
    "deploy/k8s/secret.env",
]


def plant(checkout):
    """The secrets planted in checkout: {relative path: its content}."""
    stack_secrets.generate(checkout / ".secrets")
    planted = {
        path.relative_to(checkout).as_posix(): path.read_text()
        for path in (checkout / ".secrets").rglob("*")
        if path.is_file()
    }
    for name in PLANTED:
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        planted[name] = f"planted-{secrets.token_hex(16)}\n"
        (checkout / name).write_text(planted[name])
    return planted


def test_the_build_context_leaves_out_every_secret_wherever_it_sits():
    """.dockerignore's rules (read as Docker reads them) against the names."""
    rules = build_context_rules()
    for name in [*PLANTED, ".secrets/postgres_password", ".secrets/tls/tls.key"]:
        assert left_out(name, rules), name
    for needed in ["flask_app/serve.sh", "common/settings.py", "docker/bench.sh", "lua/post.lua"]:
        assert not left_out(needed, rules), needed


def clone_files():
    """The project's files as a clone has them (git's index)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def saved_image(tmp_path_factory):
    """The app image built from a checkout holding secrets, as `docker save`'s tar,
    and the secrets planted: {path: content}."""
    system_tool("docker")
    tmp = tmp_path_factory.mktemp("image-secrets")
    checkout = tmp / "checkout"
    for name in clone_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, checkout / name)
    planted = plant(checkout)
    env = dict(os.environ)
    tag = f"films-secrets-scan:{os.getpid()}"
    with exclusive("compose-up-e2e.lock"), docker_daemon(env, tmp):
        build_standins(env)
        before = images(env)
        try:
            run(["docker", "build", "--target", "app", "-t", tag, str(checkout)], env, timeout=900)
            run(["docker", "save", "--output", str(tmp / "image.tar"), tag], env, timeout=300)
        finally:
            remove_new_images(env, before, [tag])
    yield tmp / "image.tar", planted


def layer_files(image_tar):
    """(blob, path, content) for every regular file of every layer of the image,
    and each blob that is no layer (manifests, the config: JSON) as it is."""
    with tarfile.open(image_tar) as image:
        for blob in image:
            if not blob.isfile():
                continue
            try:
                layer = tarfile.open(fileobj=image.extractfile(blob))
            except tarfile.TarError:
                yield blob.name, "", image.extractfile(blob).read()
                continue
            with layer:
                for member in layer:
                    if member.isfile():
                        yield blob.name, member.name, layer.extractfile(member).read()


@pytest.mark.slow
@pytest.mark.docker
def test_no_layer_of_the_image_holds_a_secret_of_the_checkout(saved_image):
    image_tar, planted = saved_image
    names = {Path(name).name for name in planted} | {".secrets"}
    markers = {name: content.strip().encode() for name, content in planted.items()}
    found, files = [], 0
    for layer, path, content in layer_files(image_tar):
        files += 1
        if any(part in names for part in Path(path).parts):
            found.append(f"{layer}: {path}")
        found += [f"{layer}: {path} holds {name}" for name, m in markers.items() if m in content]
    assert files > 1000, "the scan read the image's files"  # the venv alone has thousands
    assert found == []
