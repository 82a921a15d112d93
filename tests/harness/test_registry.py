"""The app registry (infra/apps.py): every app declared once, in its own
folder's app.toml, and read by everything else. A fifth app in a folder of
its own is served, measured and reported with no other file changed; the
compose file, the Kubernetes manifests and the docs' app table agree with
the registry."""

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from infra import ROOT, apps
from tests.deploy.test_k8s import render

FIFTH_TOML = """name = "fifth"
order = 5
framework = "Flask 3, copied"
packages = ["flask"]
interface = "wsgi"
factory = "fifth_app:create_app"
driver = "psycopg2-binary"
"""


def fifth_app(folder):
    """A throwaway fifth app in folder: Flask's, copied and renamed."""
    target = folder / "fifth_app"
    shutil.copytree(ROOT / "flask_app", target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "app.toml").write_text(FIFTH_TOML)
    serve = (target / "serve.sh").read_text()
    (target / "serve.sh").write_text(serve.replace("flask_app:create_app", "fifth_app:create_app"))
    return target


def test_the_four_apps_are_declared_in_their_folders_flask_first():
    declared = apps.registry()
    assert list(declared) == ["flask", "quart", "sanic", "falcon"]
    for app in declared.values():
        assert app.folder == ROOT / f"{app.name}_app" and app.serve.exists()
        assert app.interface in apps.INTERFACES


def test_an_app_toml_that_does_not_declare_an_app_is_refused_by_name(tmp_path):
    folder = fifth_app(tmp_path)
    (folder / "app.toml").write_text(FIFTH_TOML.replace('"wsgi"', '"cgi"'))
    with pytest.raises(apps.BadApp, match="interface must be one of wsgi, asgi"):
        apps.scan([tmp_path])
    (folder / "app.toml").write_text(FIFTH_TOML.replace('name = "fifth"', 'name = "sixth"'))
    with pytest.raises(apps.BadApp, match="the folder must be sixth_app"):
        apps.scan([tmp_path])
    (folder / "app.toml").write_text("name = 'fifth'\n")
    with pytest.raises(apps.BadApp, match="'order'"):
        apps.scan([tmp_path])


def test_apps_path_adds_the_apps_of_another_folder(tmp_path):
    fifth_app(tmp_path)
    found = apps.scan(apps.folders({"APPS_PATH": str(tmp_path)}))
    assert list(found) == ["flask", "quart", "sanic", "falcon", "fifth"]
    assert found["fifth"].pythonpath.split(os.pathsep) == [str(ROOT), str(tmp_path)]
    assert found["fifth"].serve_command == ["sh", str(tmp_path / "fifth_app" / "serve.sh")]


@pytest.mark.slow  # ./benchmark.sh serves and measures the fifth app
def test_a_fifth_app_is_served_measured_and_reported_with_no_other_file_changed(tmp_path):
    fifth_app(tmp_path)
    results = tmp_path / "results"
    completed = subprocess.run(
        [
            *("./benchmark.sh", "fifth", "flask", "--routes", "film,review"),
            *("--duration", "1s", "--warmup", "0", "-c", "4", "--no-pgbench"),
            *("--results", str(results)),
        ],
        cwd=ROOT,
        env={**os.environ, "APPS_PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [saved] = results.glob("*/*.json")
    data = json.loads(saved.read_text())
    assert [(a["app"], a["status"]) for a in data["apps"]] == [  # as the command names them
        ("fifth", "measured"),
        ("flask", "measured"),
    ]
    fifth = next(a for a in data["apps"] if a["app"] == "fifth")
    assert "fifth_app:create_app()" in fifth["server_command"]
    assert fifth["versions"]["flask"] and fifth["workers"] == len(os.sched_getaffinity(0))
    assert {(m["app"], m["route"]) for m in data["measurements"]} >= {
        ("fifth", "film"),
        ("fifth", "review"),
    }
    assert "| fifth |" in saved.with_suffix(".md").read_text()


def test_compose_runs_every_app_and_nothing_else():
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    served = {name for name, service in services.items() if "_app/serve.sh" in str(service)}
    assert served == set(apps.names())
    for name in apps.names():
        assert services[name]["command"] == apps.get(name).serve_command


def test_kubernetes_runs_every_app_and_nothing_else():
    deployed = {
        o["metadata"]["name"]
        for o in render("base")
        if o["kind"] == "Deployment" and "_app/serve.sh" in str(o)
    }
    assert deployed == set(apps.names())


def test_the_docs_app_table_is_the_registrys():
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("<!-- apps: python -m infra.apps -->\n") + len(
        "<!-- apps: python -m infra.apps -->\n"
    )
    assert text[start : text.index("<!-- end apps -->", start)] == apps.table()


def test_no_module_outside_the_registry_lists_the_apps():
    """The app names written as a list, ("flask", "quart", ...), anywhere
    but the tests' own parameters: the registry is the one list."""
    listed = re.compile(r"""["']flask["'],\s*["']quart["'],\s*["']sanic["']""")
    found = [
        path.relative_to(ROOT)
        for folder in ("bench", "tools", "db", "common", "infra", "docker")
        for path in (ROOT / folder).rglob("*.py")
        if listed.search(path.read_text())
    ]
    assert found == []
