"""deploy/k8s/ as a security reviewer reads it, rendered by kustomize (the
base and each overlay, tests/deploy/test_k8s.py's render) and checked without a
cluster:

- every pod passes the Pod Security Standards' restricted profile (its rules,
  written out below from the Kubernetes documentation, as the admission
  controller checks them), plus what the profile leaves out: a read-only
  root filesystem, resources, no service account token;
- the namespace enforces restricted;
- NetworkPolicies: from the rendered policies, which pod may open which port
  of which other is worked out and compared with the intended matrix; no
  pod reaches outside the namespace but DNS (and the external-database
  overlay's Postgres);
- no Secret is committed, no password sits in an environment variable: the
  pods mount the secret `secrets` (created from the generated files) as
  files, each only the keys it needs;
- every app has a PodDisruptionBudget; images are named by version.
"""

import ipaddress
import itertools
import os
import subprocess

import pytest

from tests.deploy.test_k8s import APPS, KUSTOMIZATIONS, find, render
from tools import ROOT

ENTRYPOINT = ROOT / "docker" / "pgbouncer" / "entrypoint.sh"
CA_FILE = "/run/database-ca/ca.crt"  # the external-database overlay's mount
# The restricted profile (kubernetes.io/docs/concepts/security/pod-security-standards),
# and the baseline it includes.
ALLOWED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
    "persistentVolumeClaim", "projected", "secret",
}  # fmt: skip
ALLOWED_CAPABILITIES = {"NET_BIND_SERVICE"}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SECCOMP_ALLOWED = {"RuntimeDefault", "Localhost"}
# The generated secrets' names (tools/secrets.py): the keys of `secrets`.
SECRET_KEYS = {
    "postgres_password", "owner_password", "app_password", "bench_password",
    "pgbouncer_auth_password", "pgbouncer_admin_password", "pgbouncer_stats_password",
    "write_token",
}  # fmt: skip


@pytest.fixture(scope="module", params=KUSTOMIZATIONS)
def objects(request):
    return render(request.param)


def pod_templates(objects):
    """(name, pod spec, pod labels) of every workload."""
    for o in objects:
        if o["kind"] in ("Deployment", "StatefulSet"):
            template = o["spec"]["template"]
        elif o["kind"] == "CronJob":
            template = o["spec"]["jobTemplate"]["spec"]["template"]
        else:
            continue
        yield o["metadata"]["name"], template["spec"], template["metadata"]["labels"]


def containers(pod):
    return [*pod.get("initContainers", []), *pod["containers"]]


def restricted_violations(pod):
    """What the restricted profile would refuse in pod (a list of strings)."""
    found = []
    context = pod.get("securityContext", {})
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field):
            found.append(field)
    for volume in pod.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            found.append(f"volume {volume['name']}: {kinds}")
    for sysctl in context.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            found.append(f"sysctl {sysctl['name']}")
    if context.get("runAsUser") == 0:
        found.append("pod runAsUser 0")
    for container in containers(pod):
        name = container["name"]
        own = container.get("securityContext", {})
        if own.get("privileged"):
            found.append(f"{name}: privileged")
        if own.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation is not false")
        if not own.get("runAsNonRoot", context.get("runAsNonRoot")):
            found.append(f"{name}: runAsNonRoot is not true")
        if own.get("runAsUser", context.get("runAsUser")) == 0:
            found.append(f"{name}: runAsUser 0")
        seccomp = own.get("seccompProfile", context.get("seccompProfile", {})).get("type")
        if seccomp not in SECCOMP_ALLOWED:
            found.append(f"{name}: seccompProfile {seccomp}")
        capabilities = own.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            found.append(f"{name}: capabilities not dropped")
        if not set(capabilities.get("add", [])) <= ALLOWED_CAPABILITIES:
            found.append(f"{name}: capabilities added {capabilities['add']}")
        if own.get("procMount", "Default") != "Default":
            found.append(f"{name}: procMount")
        if any(port.get("hostPort") for port in container.get("ports", [])):
            found.append(f"{name}: hostPort")
        if own.get("appArmorProfile", {}).get("type") == "Unconfined":
            found.append(f"{name}: AppArmor unconfined")
    return found


def test_the_namespace_enforces_restricted(objects):
    [namespace] = [o for o in objects if o["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"


def test_every_pod_passes_the_restricted_profile(objects):
    pods = list(pod_templates(objects))
    assert len(pods) >= len(APPS) + 3
    for name, pod, _labels in pods:
        assert restricted_violations(pod) == [], name


def test_the_restricted_check_can_fail():
    """The check above refuses what the profile refuses."""
    [(_, pod, _)] = [p for p in pod_templates(render("base")) if p[0] == "quart"]
    assert restricted_violations(pod) == []
    bad = {**pod, "hostNetwork": True, "volumes": [{"name": "h", "hostPath": {"path": "/"}}]}
    [container] = bad["containers"]
    bad["containers"] = [{**container, "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]
    found = "\n".join(restricted_violations(bad))
    for word in ("hostNetwork", "hostPath", "allowPrivilegeEscalation", "capabilities not dropped"):
        assert word in found


def test_every_container_is_hardened_beyond_the_profile(objects):
    """Read-only root (writable paths are emptyDirs), requests and limits of
    CPU and memory, no service account token, a liveness probe on every
    long-running container."""
    for name, pod, _labels in pod_templates(objects):
        assert pod["automountServiceAccountToken"] is False, name
        for container in containers(pod):
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
            for bound in ("requests", "limits"):
                assert set(container["resources"][bound]) >= {"cpu", "memory"}, name
        if "restartPolicy" not in pod:  # a Deployment's or StatefulSet's: runs for good
            for container in pod["containers"]:
                assert "livenessProbe" in container and "readinessProbe" in container, name


def test_liveness_never_asks_the_database(objects):
    """/health asks Postgres: as liveness it would restart every app pod when
    the database is away. Readiness may ask it; liveness only that the
    process answers."""
    for name, pod, _labels in pod_templates(objects):
        for container in pod["containers"]:
            probe = container.get("livenessProbe", {})
            assert probe.get("httpGet", {}).get("path") != "/health", name


def test_no_password_in_the_manifests_or_the_environment(objects):
    """No Secret object is rendered (it is created from the generated files);
    no variable comes from a secret; the pods mount `secrets` as files, each
    only keys that exist; URLs hold no password."""
    assert not [o for o in objects if o["kind"] == "Secret"]
    for name, pod, _labels in pod_templates(objects):
        for container in containers(pod):
            assert "envFrom" not in container, name
            for variable in container.get("env", []):
                assert "secretKeyRef" not in variable.get("valueFrom", {}), (name, variable)
                assert "PASSWORD" not in variable["name"] or variable["name"].endswith("_FILE")
        for volume in pod.get("volumes", []):
            if "secret" in volume:
                assert volume["secret"]["secretName"] == "secrets", name
                keys = {item["key"] for item in volume["secret"]["items"]}
                assert keys <= SECRET_KEYS, name
                assert volume["secret"]["defaultMode"] & 0o007 == 0, name  # not world-readable
    [config] = [o for o in objects if o["kind"] == "ConfigMap" and "APP_DATABASE_URL" in o["data"]]
    for value in config["data"].values():
        assert ":" not in value.split("@")[0].removeprefix("postgresql://"), value


def test_each_pod_mounts_only_the_secrets_it_needs(objects):
    mounted = {}
    for name, pod, _labels in pod_templates(objects):
        for volume in pod.get("volumes", []):
            if "secret" in volume:
                mounted[name] = {item["key"] for item in volume["secret"]["items"]}
    for app in APPS:
        assert mounted[app] == {"app_password"}
    assert mounted["proxy"] == {"write_token"}
    assert mounted["bench"] == {"bench_password"}
    # PgBouncer: its own role's and its consoles', never the apps' (auth_query).
    assert mounted["pgbouncer"] == {
        "pgbouncer_auth_password", "pgbouncer_admin_password", "pgbouncer_stats_password"
    }  # fmt: skip
    assert "upstream" not in mounted


def test_the_proxy_does_not_start_without_the_write_token(objects):
    """No secret volume is optional: a pod whose Secret (or key) is missing
    waits, rather than starts without it. The proxy's would open writes
    (proxy/write-token.sh refuses then, unless WRITES_OPEN=1, which no
    manifest sets)."""
    for name, pod, _labels in pod_templates(objects):
        for volume in pod.get("volumes", []):
            if "secret" in volume:
                assert not volume["secret"].get("optional", False), (name, volume)
        for container in containers(pod):
            names = {item["name"] for item in container.get("env", [])}
            assert "WRITES_OPEN" not in names, name


def test_every_app_has_a_disruption_budget(objects):
    budgets = {
        o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "PodDisruptionBudget"
    }
    for app in [*APPS, "proxy"]:
        replicas = find(objects, "Deployment", app)["spec"]["replicas"]
        assert 1 <= budgets[app]["minAvailable"] < replicas, app
        assert budgets[app]["selector"]["matchLabels"] == {"app.kubernetes.io/name": app}


def test_images_are_named_by_version(objects):
    """No `latest`, no untagged name: the project's images by the tag
    kustomization.yaml gives them (a digest once pushed), the others by
    version. (Digests: nothing can be pulled here to read them.)"""
    for name, pod, _labels in pod_templates(objects):
        for container in containers(pod):
            image = container["image"]
            tag = image.rsplit("@", 1)[0].rsplit(":", 1)
            assert "@sha256:" in image or (len(tag) == 2 and tag[1] != "latest"), (name, image)
            assert any(character.isdigit() for character in tag[-1]), (name, image)


# NetworkPolicies: which pod may open which port of which other.


def selects(selector, labels):
    """A label selector (matchLabels, matchExpressions In) against labels."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def peers_allow(peers, labels):
    """A rule's from/to (no namespaceSelector or ipBlock: this namespace)."""
    if peers is None:
        return True
    return any(
        "podSelector" in peer
        and "namespaceSelector" not in peer
        and selects(peer["podSelector"], labels)
        for peer in peers
    )


def ports_allow(ports, port):
    return ports is None or any(entry["port"] == port for entry in ports)


def allowed(policies, source, target, port):
    """Whether source's pod may open target's TCP port, by the policies."""

    def direction(labels, kind, peers_key, other):
        applying = [
            p for p in policies if selects(p["podSelector"], labels) and kind in p["policyTypes"]
        ]
        if not applying:
            return True
        rules = [rule for p in applying for rule in p["spec_rules"][kind]]
        return any(
            peers_allow(rule.get(peers_key), other) and ports_allow(rule.get("ports"), port)
            for rule in rules
        )

    return direction(source, "Egress", "to", target) and direction(
        target, "Ingress", "from", source
    )


def policies_of(objects):
    found = []
    for o in objects:
        if o["kind"] == "NetworkPolicy":
            spec = o["spec"]
            found.append(
                {
                    "podSelector": spec["podSelector"],
                    "policyTypes": spec["policyTypes"],
                    "spec_rules": {
                        "Ingress": spec.get("ingress", []),
                        "Egress": spec.get("egress", []),
                    },
                }
            )
    return found


def listening(pod):
    return [
        port["containerPort"]
        for container in pod["containers"]
        for port in container.get("ports", [])
    ]


def intended(source, target):
    """The matrix: (source's name, target's name) pairs that may talk."""
    pairs = {("proxy", app) for app in APPS} | {(app, "pgbouncer") for app in APPS}
    pairs |= {(app, "upstream") for app in APPS} | {("bench", app) for app in APPS}
    pairs |= {("pgbouncer", "postgres"), ("bench", "postgres")}
    return (source, target) in pairs


def test_default_deny_in_both_directions(objects):
    denying = [
        o for o in objects if o["kind"] == "NetworkPolicy" and o["spec"]["podSelector"] == {}
        and set(o["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        and not o["spec"].get("ingress") and not o["spec"].get("egress")
    ]  # fmt: skip
    assert len(denying) == 1


def test_network_policies_allow_the_matrix_and_nothing_else(objects):
    policies = policies_of(objects)
    pods = {name: (pod, labels) for name, pod, labels in pod_templates(objects)}
    assert {"proxy", "pgbouncer", "upstream", "bench", *APPS} <= set(pods)
    for (source, (_, source_labels)), (target, (target_pod, target_labels)) in itertools.product(
        pods.items(), pods.items()
    ):
        if source == target:
            continue
        for port in listening(target_pod):
            verdict = allowed(policies, source_labels, target_labels, port)
            assert verdict == intended(source, target), (source, target, port)


def test_only_dns_leaves_the_namespace(objects):
    """Egress to other namespaces or addresses: the cluster's DNS on 53,
    and (external-database) Postgres' port for PgBouncer and the bench."""
    for o in objects:
        if o["kind"] != "NetworkPolicy":
            continue
        for rule in o["spec"].get("egress", []):
            for peer in rule.get("to", []):
                if "namespaceSelector" in peer:
                    assert peer["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
                    assert {p["port"] for p in rule["ports"]} == {53}
                if "ipBlock" in peer:
                    assert o["metadata"]["name"] == "external-database"
                    assert [p["port"] for p in rule["ports"]] == [5432]


def test_the_proxy_is_the_only_door(objects):
    """Ingress from anywhere (no from) only to the proxy; every app's Service
    is reachable through it, as in compose."""
    for o in objects:
        if o["kind"] == "NetworkPolicy":
            for rule in o["spec"].get("ingress", []):
                if "from" not in rule:
                    assert o["metadata"]["name"] == "proxy"
    ports = {
        port["name"]: port["port"] for port in find(objects, "Service", "proxy")["spec"]["ports"]
    }
    assert sorted(ports) == sorted(APPS)


def test_an_outside_database_is_reached_over_verified_tls_at_its_address_only():
    """external-database: PgBouncer and the bench verify your Postgres'
    certificate and name (verify-full, against the CA file the overlay mounts),
    and may reach only the address you name, not the whole internet."""
    objects = render("overlays/external-database")
    by_name = {name: spec for name, spec, _ in pod_templates(objects)}
    expected = {
        "pgbouncer": {"SERVER_TLS_SSLMODE": "verify-full", "SERVER_TLS_CA_FILE": CA_FILE},
        "bench": {"PGSSLMODE": "verify-full", "PGSSLROOTCERT": CA_FILE},
    }
    for name, settings in expected.items():
        [container] = by_name[name]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert {key: env.get(key) for key in settings} == settings, name
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in by_name[name]["volumes"]}
        ca_map = volumes[mounts["/run/database-ca"]]["configMap"]["name"]
        assert "ca.crt" in find(objects, "ConfigMap", ca_map)["data"]
    blocks = [
        peer["ipBlock"]["cidr"]
        for o in objects
        if o["kind"] == "NetworkPolicy"
        for rule in o["spec"].get("egress", [])
        for peer in rule.get("to", [])
        if "ipBlock" in peer
    ]
    assert blocks and all(ipaddress.ip_network(block).prefixlen == 32 for block in blocks)


def test_pgbouncer_refuses_a_verified_mode_without_its_ca_in_one_line(tmp_path):
    """docker/pgbouncer/entrypoint.sh: verify-full with no CA file is one line
    on stderr and exit 2, before PgBouncer starts (and a mode it does not
    know, the same)."""
    password = tmp_path / "password"
    password.write_text("x\n")
    for mode, ca in [("verify-full", ""), ("verify-ca", str(tmp_path / "none.crt")), ("yes", "")]:
        environment = {
            "PATH": os.environ["PATH"],
            "DB_USER": "films_app",
            "DB_PASSWORD_FILE": str(password),
            "SERVER_TLS_SSLMODE": mode,
            "SERVER_TLS_CA_FILE": ca,
        }
        completed = subprocess.run(
            ["sh", str(ENTRYPOINT)], env=environment, capture_output=True, text=True, timeout=10
        )
        assert completed.returncode == 2, mode
        assert completed.stderr.count("\n") == 1 and "SERVER_TLS_SSLMODE" in completed.stderr
