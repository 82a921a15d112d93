"""Headless Chromium from Debian's packages (chromium, chromium-driver),
driven by Selenium, for the results explorer's tests: a fresh profile each
time, no network of its own (no component updates, sync or first-run
fetches), the console and every request the page makes recorded.

`python -m tests.browser PAGE.html SHOT.png` writes a screenshot of a page
(docs/explorer.png: `python -m tests.browser docs/results/index.html
docs/explorer.png`)."""

import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

from tests.system_tools import system_tool

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",  # as root in CI, in a container
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SIZE = (1280, 1000)


def needs_chromium():
    """Chromium and its driver, or the test skips or fails (tests/system_tools.py)."""
    system_tool("chromium")
    system_tool("chromedriver")


@contextlib.contextmanager
def chromium(size=SIZE):
    """A Selenium driver of headless Chromium with a profile of its own,
    quit (and the profile removed) on the way out."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    with tempfile.TemporaryDirectory(prefix="explorer-chromium-") as profile:
        for flag in [*FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        # The driver's path given: Selenium Manager, which would look drivers up online, stays out.
        driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
        try:
            yield driver
        finally:
            driver.quit()


def opened(driver, path):
    """Load the page at path from file://; the driver."""
    driver.get(Path(path).resolve().as_uri())
    return driver


def console_errors(driver):
    """The console's errors since last asked (uncaught exceptions included)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requested(driver, page):
    """Every URL the page at path requested since last asked, itself
    included (the DevTools performance log's Network.requestWillBeSent, less
    the browser's own start page's)."""
    uri, urls = Path(page).resolve().as_uri(), []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message["params"]
        if message["method"] == "Network.requestWillBeSent" and params["documentURL"] == uri:
            urls.append(params["request"]["url"])
    return urls


def screenshot(page, path, size=(1280, 1900)):
    """A PNG of the page's first screen at path, "your conditions" answered
    for its default input, in 256 colours (small enough to commit)."""
    from PIL import Image

    with chromium(size) as driver:
        opened(driver, page).find_element("css selector", "#conditions-form button").click()
        shot = Image.open(io.BytesIO(driver.get_screenshot_as_png()))
    shot.convert("RGB").quantize(256).save(path, optimize=True)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip())
    print(f"wrote {screenshot(*sys.argv[1:])}")
