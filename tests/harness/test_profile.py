"""--profile: the layer rules (bench/layers.py), the sampler on a planted
workload of known shape (bench/sut/sampler.py), and the mode on the apps
under their real servers, with its flame graphs opened in headless
Chromium. No test asserts an app's speed."""

import subprocess
import sys
import textwrap
import time

import pytest

from bench import layers
from bench.report import flame
from bench.sut.sampler import Sampled
from infra import ROOT
from tests.browser import chromium, console_errors, needs_chromium, opened, requested
from tests.helpers import benchmark, wait_until

SITE = "/opt/venv/lib/python3.11/site-packages/"
STDLIB = "/usr/lib/python3.11/"


def frame(function, file):
    return layers.shortened(f"{function} ({file})")


@pytest.mark.parametrize(
    ("file", "where"),
    [
        (SITE + "flask/app.py", "flask/app.py"),
        (STDLIB + "json/encoder.py", "<stdlib>/json/encoder.py"),
        (str(ROOT / "common" / "sources.py"), "<project>/common/sources.py"),
        (str(ROOT / ".venv/lib/python3.11/site-packages/quart/app.py"), "quart/app.py"),
        ("<frozen importlib._bootstrap>", "<stdlib>/frozen importlib._bootstrap"),
        ("http1_request_header", "<compiled>/http1_request_header"),
        ("/srv/elsewhere/tool.py", "<other>/tool.py"),
    ],
)
def test_a_frame_is_saved_without_the_machines_paths(file, where):
    assert frame("f", file) == f"f ({where})"
    assert layers.shortened('process 4242:"/usr/bin/python3 -m app --secret x"') == "process 4242"


@pytest.mark.parametrize(("prefix", "layer"), layers.RULES)
def test_every_rule_claims_its_own_frames(prefix, layer):
    """A frame at each rule's prefix gets that rule's layer: no rule is
    shadowed by one before it (sanic/ before sanic/server/, say)."""
    assert layers.frame_layer(f"f ({prefix}x.py)") == layer


@pytest.mark.parametrize(
    ("stack", "layer"),
    [
        ("run (gunicorn/arbiter.py);handle (gunicorn/workers/gthread.py)", "server"),
        ("handle (gunicorn/workers/gthread.py);wsgi_app (flask/app.py)", "framework"),
        ("get_film (<project>/flask_app/films.py);execute (psycopg2/extras.py)", "driver"),
        # the standard library is its caller's: psycopg2's socket wait, asyncio's select
        ("execute (psycopg2/extras.py);wait (<stdlib>/selectors.py)", "driver"),
        ("run_forever (<stdlib>/asyncio/base_events.py);select (<stdlib>/selectors.py)",
         "event loop"),
        ("view (<project>/quart_app/films.py);dumps (<stdlib>/json/__init__.py)", "JSON"),
        ("handle_request (<compiled>/handle_request);send (<compiled>/send)", "server"),
        ("view (<project>/sanic_app/films.py);get (aiohttp/client.py)", "HTTP client"),
        # a package no rule names is other, even under a known caller
        ("wsgi_app (flask/app.py);spin (planted/work.py)", "other"),
        # nothing claimed at all: other
        ("_bootstrap (<stdlib>/threading.py);_worker (<stdlib>/concurrent/futures/thread.py)",
         "other"),
    ],
)  # fmt: skip
def test_a_sample_is_the_layer_of_its_innermost_claimed_frame(stack, layer):
    assert layers.stack_layer("process 1;" + stack) == layer


def test_the_layers_add_up_to_the_processes_cpu():
    sampled = {
        "stacks": layers.packed(
            {"a (flask/app.py)": 30, "b (gunicorn/http/wsgi.py)": 10, "c (x/y.py)": 10}
        ),
        "user_s": 2.0,
        "system_s": 0.5,
    }
    per = layers.per_request(sampled, 2500)  # µs per request of the part "app"
    assert per["framework"] == pytest.approx(1200) and per["server"] == pytest.approx(400)
    assert per["other"] == pytest.approx(400) and per["kernel"] == pytest.approx(500)
    assert sum(per.values()) == pytest.approx(2500)
    assert layers.per_request({**sampled, "stacks": layers.packed({})}, 2500) is None


def test_stacks_are_saved_with_each_frame_once():
    stacks = {"p;a (x/y.py);b (x/z.py)": 3, "p;a (x/y.py)": 2, "p;a (x/y.py);a (x/y.py)": 1}
    saved = layers.packed(stacks)
    assert saved["frames"] == ["p", "a (x/y.py)", "b (x/z.py)"]
    assert layers.unpacked(saved) == stacks


def test_a_flame_graph_is_one_svg_that_fetches_nothing():
    stacks = {
        "process 1;a (flask/app.py);b (psycopg2/extras.py)": 3,
        "process 2;a (flask/app.py)": 1,
    }
    text = flame.svg(stacks, "flask <& film")
    assert text.startswith("<svg") and "flask &lt;&amp; film (4 samples)" in text
    assert "href" not in text and "<script" not in text and "url(" not in text
    assert "75.0%" in text  # b's share, in its title
    assert "process 1" not in text  # the processes merged


PLANTED = """\
import json, sys, time
sys.path.insert(0, sys.argv[1])
import planted
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[2])
data = {"films": [{"id": n, "title": "x" * 20} for n in range(40)]}
while time.monotonic() < end:
    start = time.monotonic()
    while time.monotonic() - start < 0.006:  # 3/4 of the time in json
        json.dumps(data)
    planted.spin(0.002)  # 1/4 in a package no rule names
"""


@pytest.mark.slow
def test_a_planted_workload_is_attributed_to_its_layers(tmp_path):
    """A process that spends 3/4 of its time in json and 1/4 in a package no
    rule names: its samples say so within a wide margin, and its CPU is
    read from /proc."""
    package = tmp_path / "site-packages" / "planted"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """\
            import time
            def spin(seconds):
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    sum(range(200))
            """
        )
    )
    argv = [sys.executable, "-c", PLANTED, str(package.parent), "8"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout.readline().strip() == "ready"
            with Sampled([process.pid]) as sampled:
                time.sleep(4)
            result = sampled.result()
        finally:
            process.kill()
    stacks = layers.unpacked(result["stacks"])
    counts = layers.attributed(stacks)
    total = sum(counts.values())
    assert total > 150, result  # 100 a second, for 4 s, of one busy thread
    assert counts["JSON"] / total == pytest.approx(0.75, abs=0.15), counts
    assert counts["other"] / total == pytest.approx(0.25, abs=0.15), counts
    assert result["user_s"] + result["system_s"] == pytest.approx(4, abs=1.5), result
    assert result["processes"][str(process.pid)]["samples"] == total
    assert not any("planted" in stack and str(tmp_path) in stack for stack in stacks)


@pytest.mark.slow
def test_profile_samples_every_worker_and_its_layers_add_up(tmp_path):
    """Flask (gunicorn's workers) and Sanic (its worker processes) at one
    low rate: every worker sampled, and every one that served requests
    (kept-alive connections may all land on one) with samples; the CPU the
    sampler read of its processes within 10 % of the part "app"; flame
    graphs that render with no request."""
    needs_chromium()
    path, data = benchmark(
        tmp_path,
        "flask",
        "sanic",
        "--rate",
        "200",
        "--profile",
        "--routes",
        "film",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "--no-pgbench",
    )
    profiles = data["profiles"]
    assert sorted(p["app"] for p in profiles) == ["flask", "sanic"]
    for profile in profiles:
        sampled = profile["sampled"]
        assert len(profile["workers"]) == 2, profile["workers"]
        for pid in profile["workers"]:  # each sampled; each that worked has samples
            process = sampled["processes"][str(pid)]
            assert process["samples"] > 0 or process["cpu_s"] < 0.05, (profile["app"], sampled)
        assert sum(p["samples"] for p in sampled["processes"].values()) == sampled["samples"]
        app_us = profile["cpu_us_per_request"]["app"]
        assert sum(profile["layers_us"].values()) == pytest.approx(app_us, rel=0.01)
        # The processes the sampler read are the app's: their CPU is the part's.
        answered = profile["report"]["ok"] + profile["report"]["non_2xx"]
        read = (sampled["user_s"] + sampled["system_s"]) / answered * 1e6
        assert read == pytest.approx(app_us, rel=0.10), (read, app_us)
        assert profile["cpu_us_per_request"]["profiler"] > 0
        assert not any("(/" in frame for frame in sampled["stacks"]["frames"])  # no machine path
    markdown = path.with_suffix(".md").read_text()
    assert "## Where the CPU goes, by layer" in markdown
    flames = sorted(path.parent.glob("*-flame-*.svg"))
    assert [f.name.split("-flame-")[1] for f in flames] == [
        "flask-tuned-film-200.svg",
        "sanic-tuned-film-200.svg",
    ]
    assert path.with_name(path.stem + "-layers.png").exists()
    with chromium() as driver:
        for svg in flames:
            opened(driver, svg)
            assert driver.find_elements("css selector", "rect[fill]"), svg
            assert requested(driver, svg) == [svg.resolve().as_uri()]
            assert console_errors(driver) == []
        # The run's explorer: a bar per app, and its flame graphs shown from beside it.
        page = path.parent / "index.html"
        opened(driver, page)
        shown = "return document.querySelectorAll('#profile-table tbody tr').length"
        assert driver.execute_script(shown) == 2
        loaded = (
            "return [...document.querySelectorAll('#profile-flames img')]"
            ".map(i => i.complete && i.naturalWidth)"
        )
        assert wait_until(lambda: all(driver.execute_script(loaded) or [False]), 10)
        assert len(driver.execute_script(loaded)) == 2
        assert console_errors(driver) == []
        outside = [url for url in requested(driver, page) if not url.startswith("file://")]
        assert outside == []
