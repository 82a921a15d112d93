"""The results explorer in a real browser: headless Chromium from Debian's
packages, driven by Selenium (tests/browser.py), on the page over every
committed run and on a synthetic run that carries capacity, intervals and
CPU (tests/explorer_data.py), both opened from file://."""

import io
import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from bench.report import explorer
from tests import browser
from tests.explorer_data import synthetic
from tools import ROOT

pytestmark = pytest.mark.slow  # starts Chromium
RESULTS = ROOT / "docs" / "results"
CAPACITY_GRID = RESULTS / "2026-11-27-capacity-grid.json"  # the conditions' run
OVERLOAD = RESULTS / "2026-11-28-overload-flask.json"  # a run past capacity
SPIKE = RESULTS / "2026-11-28-overload-gate.json"  # and a spike


def measured_nothing():
    """The synthetic run, with no figure and one app that failed to start."""
    data = synthetic()
    data["measurements"] = []
    data["apps"][0].update(status="failed", reason="did not answer /health")
    return data


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explorer")
    return {
        "all": explorer.build(RESULTS, folder / "index.html"),
        "synthetic": explorer.write(synthetic(), folder / "synthetic.html"),
        "nothing": explorer.write(measured_nothing(), folder / "nothing.html"),
        "overload": explorer.write(json.loads(OVERLOAD.read_text()), folder / "overload.html"),
        "spike": explorer.write(json.loads(SPIKE.read_text()), folder / "spike.html"),
    }


@pytest.fixture(scope="module")
def driver():
    browser.needs_chromium()
    with browser.chromium() as driver:
        yield driver


@pytest.fixture
def opened(driver, pages):
    """open(name): the page loaded afresh, its console and network logs emptied."""

    def open_page(name):
        browser.opened(driver, pages[name])
        return driver

    yield open_page
    assert browser.console_errors(driver) == []


def state(driver, expression):
    return driver.execute_script(f"return {expression}")


def sweep_labels(driver):
    return state(driver, "explorer.charts.sweep.series.slice(1).map((s) => s.label)")


def test_the_page_loads_with_no_console_error_and_no_request_outside_file(driver, pages):
    browser.console_errors(driver)  # what came before is not the page's
    browser.opened(driver, pages["all"])
    assert browser.console_errors(driver) == []
    requests = browser.requested(driver, pages["all"])
    assert pages["all"].resolve().as_uri() in requests  # the log is read: the page's own load
    outside = [url for url in requests if not url.startswith("file://")]
    assert outside == [], outside
    assert state(driver, "explorer.charts.sweep !== null && explorer.charts.spectrum !== null")


def test_every_committed_run_loads(opened):
    driver = opened("all")
    select = Select(driver.find_element(By.ID, "run-select"))
    names = [option.get_attribute("value") for option in select.options]
    assert len(names) == len(
        json.loads(state(driver, "JSON.stringify(Data.page.runs.map((r) => r.id))"))
    )
    for name in names:
        Select(driver.find_element(By.ID, "run-select")).select_by_value(name)
        assert state(driver, "explorer.run.id") == name
        assert driver.find_elements(By.CSS_SELECTOR, "#sweep-table tbody tr"), name
        assert driver.find_elements(By.CSS_SELECTOR, "#configuration-table tbody tr"), name
        assert state(driver, "explorer.charts.spectrum.series.length") > 1, name
        assert browser.console_errors(driver) == [], name
    superseded = [option.text for option in select.options if "[superseded]" in option.text]
    marked = state(driver, "Data.page.runs.filter((r) => r.superseded).length")
    assert len(superseded) == marked >= 1  # as docs/results.md marks them History


def test_a_filter_changes_the_plotted_series(opened):
    driver = opened("all")
    assert state(driver, "explorer.run.id") == CAPACITY_GRID.stem  # the conditions' run, first
    before = sweep_labels(driver)
    apps = ["quart", "sanic", "falcon", "flask#1", "flask#2"]
    assert before == [f"{app} (tuned)" for app in apps]
    checkbox = driver.find_element(
        By.CSS_SELECTOR, '#filter-controls input[name="app"][value="quart"]'
    )
    checkbox.send_keys(Keys.SPACE)  # by keyboard
    assert sweep_labels(driver) == [f"{app} (tuned)" for app in apps if app != "quart"]
    table = driver.find_element(By.ID, "sweep-table").text
    assert "quart (tuned)" not in table and "sanic (tuned)" in table
    films = state(driver, "explorer.charts.sweep.data[1]")
    Select(
        driver.find_element(By.CSS_SELECTOR, '#filter-controls select[name="route"]')
    ).select_by_value("review")
    assert state(driver, "explorer.charts.sweep.data[1]") != films


def answer(driver, **fields):
    """Fill "your conditions" and submit it with the Enter key; explorer.answer."""
    form = driver.find_element(By.ID, "conditions-form")
    for name, value in fields.items():
        field = form.find_element(By.NAME, name)
        if field.tag_name == "select":
            Select(field).select_by_value(value)
        else:
            field.clear()
            field.send_keys(str(value))
    form.find_element(By.NAME, "budget").send_keys(Keys.ENTER)
    return state(
        driver,
        "((a) => ({run: a.run.id, delay: a.delay, clients: a.clients, notes: a.notes, "
        "command: a.command, options: a.options.map((o) => [o.name, o.cell.rps, o.meets])}))"
        "(explorer.answer)",
    )


def test_your_conditions_answer_from_the_measured_cell(opened):
    """At the run's own objective, by capacity: each option's, and each meets
    the objective at it; at another, by the closed loop's req/s and p99."""
    driver = opened("all")
    data = json.loads(CAPACITY_GRID.read_text())
    here = ("review", 20.0, 100)
    peaks = {
        f"{p['app']} ({p['deployment']})": p["summary"]
        for p in data["measurements"]
        if (p["route"], p["db_delay_ms"], p["connections"]) == here
    }
    capacities = {
        f"{c['app']} ({c['deployment']})": c["capacity_rps"]["value"]
        for c in data["capacity"]
        if (c["route"], c["db_delay_ms"]) == here[:2]
    }
    got = answer(driver, route="review", delay=20, clients=100, objective=100, budget=20)
    assert (got["run"], got["delay"], got["clients"], got["notes"]) == (
        CAPACITY_GRID.stem,
        20,
        100,
        [],
    )
    assert {name: round(rps) for name, rps, _ in got["options"]} == {
        name: round(summary["requests_per_s"]) for name, summary in peaks.items()
    }
    assert {name: met for name, _, met in got["options"]} == {
        name: capacity > 0 for name, capacity in capacities.items()
    }
    best = max(capacities, key=capacities.get)
    text = driver.find_element(By.ID, "conditions-answer").text
    assert f"Most capacity with a p99 within 100 ms and 20 connections: {best}" in text
    assert f"{round(capacities[best]):,} req/s within the objective" in text
    got = answer(driver, objective=1000)
    assert {name: met for name, _, met in got["options"]} == {
        name: summary["latency_ms"]["p99"] <= 1000 for name, summary in peaks.items()
    }
    assert "not at your p99 of 1,000 ms" in " ".join(got["notes"])


def test_your_conditions_say_when_they_lie_outside_what_was_measured(opened):
    driver = opened("all")
    got = answer(driver, route="film", delay=50, clients=200, objective=150, budget=10)
    assert (got["delay"], got["clients"]) == (20, 100)  # the nearest measured
    notes = " ".join(got["notes"])
    assert "database delay, 50 ms, lies outside what was measured (0–20 ms)" in notes
    assert "client count, 200, lies outside what was measured (100)" in notes
    assert "yours, 10, is fewer" in notes
    assert got["command"] == (
        "./benchmark.sh flask flask falcon quart sanic --slo 100ms --routes film,review "
        "--repeat 5 --duration 1s --warmup 0 --slo-step 1s --db-delay 50ms -c 200 "
        "--db-connections 10"
    )
    assert got["command"] in driver.find_element(By.ID, "conditions-answer").text
    between = answer(driver, delay=3, clients=100, budget=20)  # 3 ms: as near 1 as 5
    assert (between["delay"], between["clients"]) == (5, 100)
    assert "was not measured" in " ".join(between["notes"])


def test_capacity_intervals_and_cpu_show_when_a_run_carries_them(opened):
    driver = opened("synthetic")
    metrics = Select(driver.find_element(By.CSS_SELECTOR, '#filter-controls select[name="metric"]'))
    assert [option.get_attribute("value") for option in metrics.options] == [
        "rps",
        "capacity",
        "p99",
        "pss",
        "cpu",
    ]
    table = driver.find_element(By.ID, "sweep-table").text
    assert (
        "capacity, req/s (95% interval)" in table
        and "app 900 · postgres 200 · generator 50" in table
    )
    assert "(ci95)" in table  # the req/s interval's kind
    ratios = driver.find_element(By.ID, "ratios")
    assert ratios.is_displayed()
    assert "no measurable difference" in ratios.text and "a measurable difference" in ratios.text
    assert "A/A noise floor" in ratios.text
    answer(driver, delay=10, clients=50, objective=100, budget=20)
    verdict = driver.find_element(By.ID, "conditions-answer").text
    assert "Most capacity" in verdict and "quart (tuned), 248" in verdict
    assert "no measurable difference" in verdict
    answer(driver, delay=0, clients=10, objective=100, budget=20)
    assert "a measurable difference" in driver.find_element(By.ID, "conditions-answer").text
    got = answer(driver, objective=150)  # capacity was found at 100 ms: ranked by req/s
    assert "not at your p99 of 150 ms" in " ".join(got["notes"])
    assert "Most req/s with" in driver.find_element(By.ID, "conditions-answer").text


def test_a_run_past_capacity_shows_its_goodput_curve(opened):
    """--overload's figures: the goodput of each deployment against the
    multiple of its capacity offered, charted and tabled; a run without them
    shows no such section."""
    driver = opened("overload")
    section = driver.find_element(By.ID, "overload")
    assert section.is_displayed()
    assert section.find_elements(By.CSS_SELECTOR, "#overload-chart canvas")
    table = driver.find_element(By.ID, "overload-table").text
    assert "flask (tuned), capacity 1,040 req/s" in table
    assert "flask (unbounded), capacity 1,186 req/s" in table
    assert "1,362 (1,200–1,524)" in table and "88 (62–113)" in table
    driver = opened("synthetic")
    assert not driver.find_element(By.ID, "overload").is_displayed()


def test_a_run_with_a_spike_shows_each_seconds_p99_and_the_recovery(opened):
    """--spike's figures: each option's p99 second by second, charted, and
    its phases, goodput per phase and recovery, tabled as the record holds
    them; a run without a spike shows no such section."""
    data = json.loads(SPIKE.read_text())
    driver = opened("spike")
    section = driver.find_element(By.ID, "spike")
    assert section.is_displayed()
    assert section.find_elements(By.CSS_SELECTOR, "#spike-chart canvas")
    table = driver.find_element(By.ID, "spike-table").text
    for found in data["spike"]:
        option = f"{found['app']} ({found['deployment']}), capacity {found['capacity_rps']:,.0f}"
        assert option in table
        recovered = found["recovery_s"]["value"]
        assert (f"{recovered:g}" if recovered is not None else "not recovered") in table
    assert "0.5x for 10 s, 3x for 5 s, 0.5x for 15 s" in table
    driver = opened("overload")
    assert not driver.find_element(By.ID, "spike").is_displayed()


def test_a_run_that_measured_nothing_shows_what_ran(opened):
    driver = opened("nothing")
    assert "failed: did not answer /health" in driver.find_element(By.ID, "configuration").text
    assert "Nothing measured" in driver.find_element(By.ID, "sweep").text
    assert "No run here measured" in driver.find_element(By.ID, "conditions").text


def test_every_control_is_labelled_and_reached_by_the_keyboard(opened):
    driver = opened("all")
    unlabelled = state(
        driver,
        "[...document.querySelectorAll('input, select, button')]"
        ".filter((c) => !c.closest('label') && !c.labels?.length && c.type !== 'submit')"
        ".map((c) => c.outerHTML)",
    )
    assert unlabelled == []
    reached = set()
    body = driver.find_element(By.TAG_NAME, "body")
    body.click()
    for _ in range(40):
        driver.switch_to.active_element.send_keys(Keys.TAB)
        reached.add(state(driver, "document.activeElement.name || document.activeElement.id"))
    assert {"delay", "clients", "objective", "budget", "run-select", "route", "app"} <= reached


def test_a_screenshot_is_not_blank(opened):
    from PIL import Image, ImageStat

    driver = opened("all")
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("L")
    assert image.size[0] >= 1000
    assert ImageStat.Stat(image).var[0] > 500  # text and charts, not one colour
