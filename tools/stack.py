"""compose.yaml as a Docker Swarm stack file (docs/deploy.md):

    docker compose -p films build
    docker compose -p films config --format json | python -m tools.stack > stack.yaml
    docker stack deploy -c stack.yaml films

`docker stack deploy` reads the Compose file format 3 (Docker 20.10's also
wants its `version`), not the Compose Specification that compose.yaml is
written in: this keeps every service, setting and healthcheck and rewrites only
what format 3 or Swarm cannot take:

- `depends_on` conditions (Swarm starts everything at once; the apps wait for
  Postgres themselves: /health answers 503 until it is there) and `build`
  (the images `docker compose build` made, `PROJECT-SERVICE`: push them to a
  registry for more than one node);
- services in a profile (the bench: run it with `docker run`, docs/deploy.md);
- the apps' published ports: each app runs `deploy.replicas` tasks behind the
  stack's proxy (endpoint_mode dnsrr: the proxy sees every task's address),
  and a published port cannot take more than one task per node;
- the apps' command, run by docker/drain.sh: a stopping task (a rolling
  update, a scale-down) keeps serving until the proxy has forgotten it;
- every other published port: host mode, as the routing mesh does not answer
  on every machine (docs/deploy.md says what it would add);
- each service's secrets: owned by the service's user (compose.yaml's
  `user`), mode 0400, as Compose cannot give them outside Swarm; the secret
  files compose.yaml names (tools/secrets.py), read by `docker stack deploy`;
- `tmpfs`, which Swarm ignores: a tmpfs mount each (format 3.6+), so that a
  read-only container still has its /tmp;
- each service's networks: a list, and every network overlay and attachable
  (a container started by hand, the bench, can join one);
- `restart` (Swarm has its own, deploy.restart_policy: on any exit) and
  `security_opt` (Swarm takes none: no-new-privileges is compose's only);
- every service's endpoint_mode: dnsrr, the name resolving to its tasks'
  addresses. A virtual IP (the default) is balanced by the same kernel IPVS
  machinery as the routing mesh, and where that fails (as on the machine this
  was developed on) no service could reach another by name.
"""

import json
import sys

import yaml

VERSION = "3.8"
# Seconds a stopping app task keeps serving (docker/drain.sh): the proxy's DNS
# cache (proxy/compose-apps.conf, valid=5s) and a margin. Then its server's own
# graceful stop (every serve.sh: 5 s), all within stop_grace_period.
DRAIN, SERVER_GRACE = 7, 5
DROPPED = ("build", "depends_on", "profiles", "pull_policy", "restart", "security_opt")
SECRET_MODE = 0o400  # the service's user reads its secrets, no one else


def secrets(spec):
    """The service's secrets, its user's own (uid:gid of compose.yaml's `user`)."""
    uid, _, gid = spec.get("user", "0:0").partition(":")
    return [
        {"source": secret["source"], "target": secret.get("target", secret["source"]),
         "uid": uid, "gid": gid or uid, "mode": SECRET_MODE}
        for secret in spec.get("secrets", [])
    ]  # fmt: skip


def service(name, spec, project):
    """One service of the stack file."""
    spec = {key: value for key, value in spec.items() if key not in DROPPED and value is not None}
    if "build" in spec or "image" not in spec:
        spec["image"] = f"{project}-{name}"
    deploy = spec.setdefault("deploy", {})
    deploy.setdefault("restart_policy", {"condition": "any"})
    spec["secrets"] = secrets(spec)
    spec["networks"] = list(spec.get("networks") or ["default"])
    limits = deploy.get("resources", {}).get("limits", {})
    if "cpus" in limits:
        limits["cpus"] = str(limits["cpus"])  # format 3: a string
    if deploy.get("endpoint_mode") == "dnsrr":  # compose.yaml's replicated apps
        spec.pop("ports", None)
        spec["command"] = ["sh", "docker/drain.sh", *spec["command"]]
        spec["environment"] = {**spec.get("environment", {}), "DRAIN_SECONDS": str(DRAIN)}
        spec["stop_grace_period"] = f"{DRAIN + SERVER_GRACE + 3}s"
    deploy["endpoint_mode"] = "dnsrr"
    spec["ports"] = [
        {
            "target": p["target"],
            "published": int(p["published"]),
            "protocol": p["protocol"],
            "mode": "host",
        }
        for p in spec.get("ports", [])
    ]
    spec["volumes"] = [
        {key: value for key, value in volume.items() if key not in ("bind", "volume")}
        for volume in spec.get("volumes", [])
    ] + [{"type": "tmpfs", "target": path} for path in spec.pop("tmpfs", [])]
    return {key: value for key, value in spec.items() if value not in ([], {})}


def stack(config):
    """The stack file for `docker compose config --format json`'s output."""
    project = config["name"]
    services = {
        name: service(name, spec, project)
        for name, spec in config["services"].items()
        if not spec.get("profiles")
    }
    used = {secret["source"] for spec in services.values() for secret in spec.get("secrets", [])}
    networks = dict.fromkeys(name for spec in services.values() for name in spec["networks"])
    return {
        "version": VERSION,
        "services": services,
        # The files compose.yaml names, each under the stack's own name.
        "secrets": {
            name: {"file": secret["file"]}
            for name, secret in config.get("secrets", {}).items()
            if name in used
        },
        "networks": {name: {"driver": "overlay", "attachable": True} for name in networks},
        "volumes": {name: {} for name in config.get("volumes", {})},
    }


def main():
    config = json.load(sys.stdin)
    yaml.safe_dump(stack(config), sys.stdout, sort_keys=False, width=1000)


if __name__ == "__main__":
    main()
