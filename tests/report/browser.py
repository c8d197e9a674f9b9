"""Headless Chromium for the report tests (Debian packages ``chromium`` and ``chromium-driver``, Python ``selenium``).

``chromium()`` skips the test with the reason when the browser, its driver or
selenium is missing — except in CI (``CI`` set), where a missing browser fails the
test: CI installs it, so its absence there is a broken setup, not a reason to pass.

``check_page()`` opens a report from its file URL with the network emulated off and
asserts what a person would see: no console errors, every chart drawn, no dialog
(``alert``/``confirm``/``prompt`` are replaced before any page script runs, so a
script smuggled in through a log would be caught calling one), nothing fetched but
the file itself. Screenshots go to ``$TOKAUDIT_ARTIFACTS_DIR`` (default
``reports/_artifacts/`` in the checkout, git-ignored) for CI to keep.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking")
RENDER_TIMEOUT_S = 60.0

# Runs before any script of the page: records dialogs instead of showing them.
_DIALOG_TRAP = """
window.__dialogs = [];
['alert', 'confirm', 'prompt', 'print'].forEach(function (name) {
  window[name] = function () { window.__dialogs.push([name, String(arguments[0])]); return null; };
});
"""


def artifacts_dir() -> Path:
    """Where screenshots are saved (created)."""
    path = Path(os.environ.get("TOKAUDIT_ARTIFACTS_DIR") or ROOT / "reports" / "_artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"headless Chromium is required in CI: {reason} (.ci/run installs the Debian packages chromium and chromium-driver)")
    pytest.skip(f"headless Chromium not available: {reason}; install the Debian packages chromium and chromium-driver and `pip install selenium`")


@contextmanager
def chromium(user_data_dir: Path):
    """A headless Chromium WebDriver with a fresh profile in ``user_data_dir``; skips (or fails in CI) when unavailable."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("the Python package selenium is not installed")
    binary = next((p for p in (shutil.which(n) for n in CHROMIUM_NAMES) if p), None)
    driver_path = shutil.which("chromedriver")
    if binary is None:
        _unavailable("no chromium executable on PATH")
    if driver_path is None:
        _unavailable("no chromedriver on PATH")
    options = webdriver.ChromeOptions()
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}", "--window-size=1400,1000"):
        options.add_argument(flag)
    options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An unexpected dialog must not be dismissed silently: the trap records it, and "ignore" leaves any other open.
    options.set_capability("unhandledPromptBehavior", "ignore")
    # The driver path is given, so selenium never tries to download one.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.set_page_load_timeout(RENDER_TIMEOUT_S)
        yield driver
    finally:
        driver.quit()


def check_page(driver: Any, html_path: Path, screenshot_name: str, *, timeout_s: float = RENDER_TIMEOUT_S) -> dict[str, Any]:
    """Open ``html_path`` offline and check it (see the module docstring); returns what was measured."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _DIALOG_TRAP})
    started = time.perf_counter()
    driver.get(html_path.resolve().as_uri())
    expected = driver.execute_script("return document.querySelectorAll('div.plot').length")
    deadline = time.monotonic() + timeout_s
    drawn = 0
    while time.monotonic() < deadline:
        drawn = driver.execute_script("return Array.from(document.querySelectorAll('div.plot')).filter(d => d.querySelector('.main-svg')).length")
        if drawn == expected:
            break
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    logs = driver.get_log("browser")
    errors = [e for e in logs if e.get("level") == "SEVERE"]
    dialogs = driver.execute_script("return window.__dialogs")
    resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    sizes = driver.execute_script(
        "return Array.from(document.querySelectorAll('div.plot .main-svg')).map(s => s.getBoundingClientRect().width * s.getBoundingClientRect().height)"
    )
    shot = artifacts_dir() / f"{screenshot_name}.png"
    driver.save_screenshot(str(shot))
    assert expected > 0 and drawn == expected, f"{drawn} of {expected} charts drawn"
    assert all(a > 0 for a in sizes), "a chart has no area"
    assert errors == [], errors
    assert dialogs == [], dialogs
    assert [r for r in resources if not r.startswith(("file:", "data:", "blob:"))] == []
    return {"charts": drawn, "seconds": seconds, "screenshot": shot, "console": logs}


def follow_drilldown(driver: Any, screenshot_name: str) -> str:
    """Click the first link to a session drill-down; assert its section is shown with a drawn chart. Returns the anchor."""
    link = driver.find_element("css selector", "a[href^='#s-']")
    anchor = link.get_attribute("href").rsplit("#", 1)[1]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    time.sleep(0.3)
    state = driver.execute_script(
        "var t = document.getElementById(arguments[0]); var r = t.getBoundingClientRect();"
        "return [location.hash, r.top, window.innerHeight, !!t.querySelector('.js-plotly-plot .main-svg'), t.matches(':target')]",
        anchor,
    )
    driver.save_screenshot(str(artifacts_dir() / f"{screenshot_name}.png"))
    hash_, top, height, has_chart, targeted = state
    assert hash_ == f"#{anchor}" and targeted, state
    assert 0 <= top < height, f"drill-down section not scrolled into view: {state}"
    assert has_chart
    return anchor
