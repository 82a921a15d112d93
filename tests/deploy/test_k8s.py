"""deploy/k8s/, checked without a cluster: kustomize renders the base and each
overlay (`kubectl kustomize`: Debian's kubernetes-client, scripts/system.sh), and
every object validates, strictly (no unknown field), against Kubernetes'
published OpenAPI schemas (the kubernetes-validate package,
requirements-dev.txt). Then what the schemas cannot know: probes, stop grace,
resources and workers as compose.yaml and bench/sut/deployments.py have them, the
Services' selectors, the bench kept off the apps' nodes and never started by
`kubectl apply` (a suspended CronJob, the template of the runs a user starts).
tests/deploy/test_k8s_security.py checks the rest: Pod Security, NetworkPolicies,
secrets as files, images.
"""

import re
import subprocess

import kubernetes_validate
import pytest
import yaml

from tests.helpers import check_tuned_environment, in_flight
from tests.system_tools import system_tool
from tools import ROOT
from tools.serve import APPS

K8S = ROOT / "deploy" / "k8s"
KUSTOMIZATIONS = ["base", "overlays/external-database"]
# The oldest Kubernetes release still maintained upstream when this was
# written, and the newest the pinned package knows: valid for both.
VERSIONS = ["1.33.0", "1.37.0"]
SERVER_GRACE = 5  # seconds: every serve.sh's graceful timeout
CPUS = 2  # compose.yaml's limit per app


def render(kustomization):
    kubectl = system_tool("kubectl")
    completed = subprocess.run(
        [kubectl, "kustomize", str(K8S / kustomization)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    return [document for document in yaml.safe_load_all(completed.stdout) if document]


@pytest.fixture(scope="module", params=KUSTOMIZATIONS)
def objects(request):
    return render(request.param)


def find(objects, kind, name):
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


@pytest.mark.slow  # every object against two releases' schemas: seconds of CPU
@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_validates_against_the_schemas(objects, version):
    for document in objects:
        kubernetes_validate.validate(document, version, strict=True)


def test_everything_is_in_the_namespace(objects):
    [namespace] = [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"]
    for document in objects:
        if document["kind"] != "Namespace":
            assert document["metadata"]["namespace"] == namespace, document["metadata"]


def test_base_has_every_part():
    kinds = {(o["kind"], o["metadata"]["name"]) for o in render("base")}
    expected = {("StatefulSet", "postgres"), ("Deployment", "pgbouncer"), ("CronJob", "bench")}
    expected |= {(kind, app) for app in APPS for kind in ("Deployment", "Service")}
    assert expected <= kinds


def env(container):
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container["env"]}


@pytest.mark.parametrize("app", APPS)
def test_app_deployment(objects, app):
    """Its serve.sh, the tuned deployment's workers for its CPUs, probes on
    /health, and a stop that fits: preStop, then the server's graceful stop,
    within terminationGracePeriodSeconds."""
    spec = find(objects, "Deployment", app)["spec"]
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"] == ["sh", f"{app}_app/serve.sh"]
    assert spec["replicas"] >= 2
    resources = container["resources"]
    assert resources["limits"] == resources["requests"] == {"cpu": str(CPUS), "memory": "512Mi"}
    variables = env(container)
    check_tuned_environment(variables, app, CPUS)
    assert variables["TRANSACTION_POOLING"] == "1"
    assert variables["DATABASE_URL"]["configMapKeyRef"]["key"] == "APP_DATABASE_URL"
    # Ready when the database answers; alive whatever it does (a Postgres
    # outage must not restart every app pod at once).
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["livenessProbe"] == {
        **container["livenessProbe"],
        "tcpSocket": {"port": "http"},
    }
    assert "httpGet" not in container["livenessProbe"]
    [sleep, seconds] = container["lifecycle"]["preStop"]["exec"]["command"]
    assert sleep == "sleep"
    assert pod["terminationGracePeriodSeconds"] > int(seconds) + SERVER_GRACE
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


# proxy/k8s.conf's upstream blocks: {app: its max_conns}
UPSTREAM = re.compile(
    r"^upstream (\w+) \{ zone \1 \d+k; server \1:8000 max_conns=(\d+); keepalive \d+; \}$", re.M
)


@pytest.mark.parametrize("app", APPS)
def test_the_proxy_refuses_past_what_the_services_pods_work_on_at_once(objects, app):
    """The Kubernetes image's nginx gives app's Service at most the requests
    its pods work on at once, together: replicas x each pod's in flight, by
    the rule --proxy limit gives each copy its own (bench/sut/budget.py Shape)."""
    limits = dict(UPSTREAM.findall((ROOT / "proxy" / "k8s.conf").read_text()))
    assert set(limits) == set(APPS)
    spec = find(objects, "Deployment", app)["spec"]
    [container] = spec["template"]["spec"]["containers"]
    assert int(limits[app]) == spec["replicas"] * in_flight(env(container))


def test_the_apps_ask_the_upstream_service(objects):
    """Each app's UPSTREAM_FANOUT names a port of the upstream Service, each
    one a port its Deployment's command listens on (as in compose.yaml)."""
    service = find(objects, "Service", "upstream")
    [container] = find(objects, "Deployment", "upstream")["spec"]["template"]["spec"]["containers"]
    [option] = [word for word in container["command"] if word.startswith("--port=")]
    listening = [int(port) for port in option.removeprefix("--port=").split(",")]
    assert container["command"][:3] == ["python", "-m", "upstream"]
    assert [port["targetPort"] for port in service["spec"]["ports"]] == listening
    sources = [f"http://upstream:{port['port']}" for port in service["spec"]["ports"]]
    for app in APPS:
        [app_container] = find(objects, "Deployment", app)["spec"]["template"]["spec"]["containers"]
        assert env(app_container)["UPSTREAM_FANOUT"].split() == sources, app


def test_services_select_their_pods(objects):
    pods = [
        o["spec"]["template"]["metadata"]["labels"]
        for o in objects
        if o["kind"] in ("Deployment", "StatefulSet")
    ]
    for service in (o for o in objects if o["kind"] == "Service"):
        selector = service["spec"]["selector"].items()
        assert sum(selector <= labels.items() for labels in pods) == 1, service["metadata"]


def test_database_url_goes_through_pgbouncer(objects):
    """The apps' URL names the pgbouncer Service's port; the bench's direct
    one names Postgres. Neither holds a password."""
    [config] = [o for o in objects if o["kind"] == "ConfigMap" and "APP_DATABASE_URL" in o["data"]]
    values = config["data"]
    port = find(objects, "Service", "pgbouncer")["spec"]["ports"][0]["port"]
    assert f"films_app@pgbouncer:{port}/" in values["APP_DATABASE_URL"]
    assert (
        f"films_bench@{values['POSTGRES_HOST']}:{values['POSTGRES_PORT']}/"
        in (values["BENCH_DATABASE_URL"])
    )


def bench_job(objects):
    """The spec of the Job each `kubectl create job --from=cronjob/bench` makes."""
    return find(objects, "CronJob", "bench")["spec"]["jobTemplate"]["spec"]


def test_apply_starts_no_bench(objects):
    """The bench writes to the database it measures (its own film and
    reviews, removed at its end): it runs when a user starts it, never
    because the manifests were applied, nor on a schedule."""
    assert not [o for o in objects if o["kind"] in ("Job", "Pod")]
    cronjob = find(objects, "CronJob", "bench")
    assert cronjob["spec"]["suspend"] is True
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    [container] = bench_job(objects)["template"]["spec"]["containers"]
    assert 'sh docker/bench.sh "$APP"' in container["command"][-1]  # compose's entrypoint


def test_bench_job_stays_off_the_apps_nodes(objects):
    pod = bench_job(objects)["template"]["spec"]
    [term] = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    selector = term["labelSelector"]["matchLabels"].items()
    for app in APPS:
        labels = find(objects, "Deployment", app)["spec"]["template"]["metadata"]["labels"]
        assert selector <= labels.items(), app
    assert not selector <= pod.get("labels", {}).items()


def config_references(node):
    """Every ConfigMap name a pod spec refers to (env)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "configMapKeyRef":
                yield value["name"]
            else:
                yield from config_references(value)
    elif isinstance(node, list):
        for item in node:
            yield from config_references(item)


def test_config_references_name_the_generated_config_map(objects):
    """kustomize suffixes the generated ConfigMap's name with a hash of its
    content, and must rewrite every reference to it (or pods never start)."""
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "ConfigMap"}
    references = set(config_references(objects))
    assert references and references <= names, (references, names)


def test_the_guide_creates_the_secret_before_it_applies():
    """docs/deploy.md's Kubernetes steps: the Secret exists before any pod
    that mounts it is applied (the namespace alone goes first)."""
    steps = (ROOT / "docs" / "deploy.md").read_text().split("## Kubernetes", 1)[1]
    lines = [line.split("#")[0].strip() for line in steps.splitlines()]
    secret = next(i for i, line in enumerate(lines) if "create secret generic secrets" in line)
    applied = [i for i, line in enumerate(lines) if line.startswith("kubectl apply")]
    assert applied and lines[applied[0]] == "kubectl apply -f deploy/k8s/base/namespace.yaml"
    assert all(i > secret for i in applied[1:]) and len(applied) >= 2
