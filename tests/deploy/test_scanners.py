"""Checkov, with no network (in a network namespace of its own), over what an
operator deploys: the Kubernetes manifests as kustomize renders them (the
base and each overlay), the images' Dockerfiles, and, for committed secrets,
compose.yaml, deploy/ and proxy/. Zero failures; each check skipped is
skipped inline with its reason (a checkov.io/skip annotation, a
`# checkov:skip=` line). hadolint lints the Dockerfiles
(tests/deploy/test_compose.py).

Checkov runs from .venv-scanners (requirements-scanners.txt, made by
./test.sh): its pins cannot share .venv's.
"""

import json
import os
import shutil
import subprocess

import pytest

from tests.deploy.test_k8s import K8S, KUSTOMIZATIONS, system_tool
from tests.system_tools import unavailable
from tools import ROOT

pytestmark = pytest.mark.slow  # Checkov takes 10-20 s to start, three times

CHECKOV = ROOT / ".venv-scanners" / "bin" / "checkov"
# The images this project builds; docker/standins/ imitate official images
# for offline tests (root, no healthcheck, as the originals) and are not deployed.
DOCKERFILES = ["Dockerfile", "proxy/Dockerfile", "docker/pgbouncer/Dockerfile"]


def checkov(*arguments, cwd=ROOT):
    """Checkov's JSON reports (a list, one per framework), run offline."""
    if not CHECKOV.exists():
        unavailable("no .venv-scanners: ./test.sh makes it (requirements-scanners.txt)")
    completed = subprocess.run(
        ["unshare", "--map-root-user", "--net", str(CHECKOV), *arguments]
        + ["--output", "json", "--skip-download", "--quiet", "--compact"],
        cwd=cwd,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.stdout.strip(), completed.stderr
    return list(json_values(completed.stdout)), completed


def json_values(text):
    """Each report Checkov printed: a list of them, one, or one per path it
    was given (the secrets framework), one after the other."""
    decoder, position = json.JSONDecoder(), 0
    while text[position:].strip():
        value, position = decoder.raw_decode(text, len(text) - len(text[position:].lstrip()))
        yield from value if isinstance(value, list) else [value]


def failures(reports):
    return [
        (check["check_id"], check.get("resource"), check.get("file_path"))
        for report in reports
        if isinstance(report, dict)
        for check in report.get("results", {}).get("failed_checks", [])
    ]


def skipped(reports):
    return [
        check
        for report in reports
        if isinstance(report, dict)
        for check in report.get("results", {}).get("skipped_checks", [])
    ]


def passed(reports):
    return sum(
        report.get("summary", {}).get("passed", 0) for report in reports if isinstance(report, dict)
    )


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    kubectl = system_tool("kubectl")
    folder = tmp_path_factory.mktemp("rendered")
    for kustomization in KUSTOMIZATIONS:
        completed = subprocess.run(
            [kubectl, "kustomize", str(K8S / kustomization)],
            capture_output=True,
            text=True,
            check=True,
        )
        (folder / f"{kustomization.replace('/', '-')}.yaml").write_text(completed.stdout)
    return folder


@pytest.fixture(scope="module")
def deployed(rendered):
    """One run over the rendered manifests and the Dockerfiles (copied
    beside them: Checkov reads no --file when it has a --directory)."""
    for path in DOCKERFILES:
        copy = rendered / "dockerfiles" / path
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, copy)
    return checkov("--framework", "kubernetes", "dockerfile", "--directory", str(rendered))


def of(reports, check_type):
    return [report for report in reports if report.get("check_type") == check_type]


def test_kubernetes_manifests_pass_checkov(deployed):
    reports, completed = of(deployed[0], "kubernetes"), deployed[1]
    assert failures(reports) == [], completed.stdout[-4000:]
    assert passed(reports) > 500  # it did read the manifests: hundreds of checks per pod
    for check in skipped(reports):  # each with its reason, from an annotation in deploy/k8s/
        assert check["check_id"] in ("CKV_K8S_43", "CKV_K8S_40"), check["check_id"]
        assert len(check["suppress_comment"]) > 30, check


def test_dockerfiles_pass_checkov(deployed):
    reports, completed = of(deployed[0], "dockerfile"), deployed[1]
    assert failures(reports) == [], completed.stdout[-4000:]
    assert passed(reports) > 30
    for check in skipped(reports):
        assert check["check_id"] == "CKV_DOCKER_2" and len(check["suppress_comment"]) > 30, check


SECRET_PATHS = ["compose.yaml", "Dockerfile", "deploy", "proxy", "docker"]


def test_no_secret_is_committed_in_what_is_deployed():
    arguments = []
    for path in SECRET_PATHS:
        arguments += ["--directory" if (ROOT / path).is_dir() else "--file", path]
    reports, completed = checkov("--framework", "secrets", *arguments)
    assert failures(reports) == [], completed.stdout[-4000:]
    assert skipped(reports) == []


def test_checkov_finds_what_it_should(tmp_path):
    """The scans can fail: a pod as they were before (root, no
    securityContext, latest) and a password in a URL fail them."""
    (tmp_path / "bad.yaml").write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: films-api}
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers:
        - name: bad
          image: films-api:latest
          env: [{name: DATABASE_URL, value: "postgresql://films:s3cr3tPassw0rdValue@db:5432/x"}]
"""
    )
    reports, _ = checkov("--framework", "kubernetes", "secrets", "--directory", str(tmp_path))
    found = {check_id for check_id, _, _ in failures(reports)}
    expected = {
        "CKV_K8S_14",
        "CKV_K8S_20",
        "CKV_K8S_22",
        "CKV_K8S_23",
        "CKV_K8S_28",
        "CKV_SECRET_4",
    }
    assert expected <= found, found
