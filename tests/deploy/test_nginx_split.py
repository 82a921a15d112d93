"""The guide's "Side by side behind nginx, split by path": its ```nginx block,
in place of proxy/nginx.conf's one upstream and server, in front of Flask and
Quart under their serve.sh. /films goes to Quart, the rest to Flask: with
Flask stopped, /films/995/ still answers and /health is nginx's 503 (its
upstream is down: proxy/api.inc's "app unavailable")."""

import os
import re
import subprocess
from pathlib import Path

import pytest
import requests

from db import embedded
from tests.faults import nginx
from tools import ROOT, proxy
from tools.serve import running, stop, wait_healthy

pytestmark = pytest.mark.slow  # starts Flask and Quart under their servers, and nginx

GUIDE = ROOT / "docs" / "migration" / "alternatives.md"  # the guide's page that has it
PORTS = {"8001": "flask", "8002": "quart", "8000": "nginx"}  # as the guide writes them


def snippet():
    [block] = re.findall(r"^```nginx\n(.*?)^```$", GUIDE.read_text(), re.MULTILINE | re.DOTALL)
    return block


def split_config(config, ports):
    """proxy/nginx.conf (as tools/proxy.py renders it) with the guide's block in
    place of its upstream and server blocks, the guide's ports replaced."""
    block = snippet()
    for guide_port, name in PORTS.items():
        block = block.replace(f":{guide_port};", f":{ports[name]};")
    start = config.index("    upstream app {")
    end = config.rindex("}")  # the http block's
    return config[:start] + block.replace("\n", "\n    ").rstrip() + "\n" + config[end:]


@pytest.fixture
def split(database_url, tmp_path):
    nginx()
    ports = {name: embedded.free_port() for name in PORTS.values()}
    logs = {name: tmp_path / f"{name}.log" for name in PORTS.values()}
    with (
        running("flask", ports["flask"], database_url, logs["flask"], web_workers=1) as flask,
        running("quart", ports["quart"], database_url, logs["quart"], web_workers=1),
    ):
        prefix = Path(proxy._prefix(ports["quart"], ports["nginx"]))
        config = prefix / "nginx.conf"
        config.write_text(split_config(config.read_text(), ports))
        with open(logs["nginx"], "w") as log:
            process = subprocess.Popen(
                [proxy.binary(), "-p", prefix, "-c", "nginx.conf", "-e", "stderr"],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=proxy.SYSTEM_USER if os.geteuid() == 0 else None,
                start_new_session=True,
            )
        handle = proxy.Proxy(process, str(prefix), f"http://127.0.0.1:{ports['nginx']}")
        try:
            wait_healthy(process, handle.url)
            yield handle.url, flask
        finally:
            proxy.stop(handle)


def test_routes_split_by_path(split):
    url, flask = split
    assert requests.get(f"{url}/films/995/", timeout=10).status_code == 200
    assert requests.get(f"{url}/health", timeout=10).status_code == 200
    stop(flask.process)
    response = requests.get(f"{url}/films/995/", timeout=10)
    assert (response.status_code, response.json()["film_id"]) == (200, 995)
    response = requests.get(f"{url}/health", timeout=10)
    assert (response.status_code, response.json()) == (503, {"error": "app unavailable"})
