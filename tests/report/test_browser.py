"""The HTML report in headless Chromium: offline, no console errors, every chart drawn, drill-downs reachable, no script from a log runs.

Skips with the reason when Chromium is missing outside CI (see tests/report/browser.py).
Screenshots: $TOKAUDIT_ARTIFACTS_DIR (default reports/_artifacts/).
"""

from __future__ import annotations

import pytest

from tests.report import hostile
from tests.report.browser import check_page, chromium, follow_drilldown
from tokaudit.report.build import build_report


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        yield d


def test_fixtures_report_renders_offline(driver, fixtures_db, tmp_path):
    from tokaudit.store import open_store

    with open_store(fixtures_db, read_only=True) as store:
        result = build_report(store, tmp_path / "fixtures", formats="html")
    seen = check_page(driver, result.files["html"], "report-fixtures")
    assert seen["charts"] == 4 + len(result.report.drilldowns)
    anchor = follow_drilldown(driver, "report-fixtures-drilldown")
    assert anchor == "s-1"
    print(f"\nfixtures report: {seen['charts']} charts drawn in {seen['seconds']:.1f} s; screenshot {seen['screenshot']}")


def test_hostile_report_runs_no_script(driver, tmp_path):
    from tokaudit.analyze.audit import run_audit
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    logs = hostile.write_logs(tmp_path / "logs")
    with open_store(str(tmp_path / "hostile.duckdb")) as store:
        ingest_paths(store, [logs], workers=1)
        run_audit(store)
        hostile.add_hostile_finding(store)
        result = build_report(store, tmp_path / "hostile", formats="html")
    check_page(driver, result.files["html"], "report-hostile")  # no dialog, no console error (a CSP violation would be one)
    found = driver.execute_script(
        "return [document.querySelectorAll('img, iframe, object, embed').length,"
        " Array.from(document.scripts).every(s => s.nonce),"
        " Array.from(document.querySelectorAll('td')).some(td => td.textContent === arguments[0])]",
        hostile.IMG,
    )
    assert found == [0, True, True]  # the name is on the page as text, and no element came from it
    # Open every finding's evidence: the quoted payloads are text there too.
    driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert driver.execute_script("return window.__dialogs") == []
    assert [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []


def test_samples_report_renders(driver, samples, tmp_path):
    from tokaudit.analyze.audit import run_audit
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    with open_store(str(tmp_path / "samples.duckdb")) as store:
        ingest_paths(store, [samples], workers=1)
        run_audit(store)
        result = build_report(store, tmp_path / "samples", formats="html")
    seen = check_page(driver, result.files["html"], "report-samples")
    follow_drilldown(driver, "report-samples-drilldown")
    print(f"\nsamples report: {seen['charts']} charts drawn in {seen['seconds']:.1f} s; screenshot {seen['screenshot']}")


def test_the_checks_catch_a_script_that_runs(driver, tmp_path):
    # The harness itself: a page that does run a logged payload must fail check_page.
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><div class="plot"></div><img src="x" onerror="alert(1)"></body></html>', encoding="utf-8")
    with pytest.raises(AssertionError):
        check_page(driver, page, "harness-self-check", timeout_s=1.0)
    assert driver.execute_script("return window.__dialogs") == [["alert", "1"]]
