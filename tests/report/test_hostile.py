"""Logs are attacker-controlled: names reach every output only escaped, secrets only redacted."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pytest

from tests.report import hostile
from tokaudit.report.build import build_report


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> str:
    from tokaudit.analyze.audit import run_audit
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    folder = tmp_path_factory.mktemp("hostile")
    logs = hostile.write_logs(folder / "logs")
    path = str(folder / "hostile.duckdb")
    with open_store(path) as store:
        ingest_paths(store, [logs], workers=1)
        run_audit(store)
        hostile.add_hostile_finding(store)
    return path


@pytest.fixture(scope="module")
def hostile_report(hostile_db, tmp_path_factory):
    from tokaudit.store import open_store

    out = tmp_path_factory.mktemp("hostile-report")
    with open_store(hostile_db) as store:
        return build_report(store, out, formats="html,md,json,csv")


def test_the_payloads_made_it_into_the_store(hostile_db):
    from tokaudit.store import open_store

    with open_store(hostile_db, read_only=True) as store:
        tools = {r[0] for r in store.duck.execute("SELECT tool_name FROM tool_calls").fetchall()}
        servers = {r[0] for r in store.duck.execute("SELECT mcp_server FROM tool_calls WHERE mcp_server IS NOT NULL").fetchall()}
        problems = store.duck.execute("SELECT count(*) FROM ingest_problems").fetchall()[0][0]
    assert hostile.IMG in tools and hostile.BREAKOUT in servers and problems == 1


def _page_without_plotly(report) -> str:
    from tokaudit.report.html import render_html

    return render_html(report, plotly_js="/* plotly.js */")


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_holds_log_text_only_escaped(hostile_report):
    page = _page_without_plotly(hostile_report.report)
    for payload in hostile.PAYLOADS:
        assert payload not in page
        assert html.escape(payload, quote=True) in page  # it is shown, as text
    parsed = _Tags()
    parsed.feed(page)
    allowed = {"html", "head", "meta", "title", "style", "script", "body", "header", "h1", "h2", "h3", "div", "nav", "a", "section", "p",
               "span", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "details", "summary", "pre", "code", "br", "em"}  # fmt: skip
    assert {tag for tag, _ in parsed.tags} <= allowed
    assert not [(t, a) for t, a in parsed.tags for name in a if name.startswith("on")]  # no event handler anywhere
    assert all((a.get("href") or "").startswith("#") for t, a in parsed.tags if t == "a")  # links only to the page's own anchors
    nonce = re.search(r"'nonce-([^']+)'", page).group(1)
    assert [a for t, a in parsed.tags if t == "script"] == [{"nonce": nonce}] * 2
    # The payloads are in the page as text a reader sees, unchanged.
    assert hostile.IMG in "".join(parsed.text)
    # Chart data is JSON inside a script: nothing in it can close the element.
    charts = page.rsplit("<script", 1)[1]
    assert charts.count("</script>") == 1 and "<!--" not in charts


def test_html_in_chart_labels_is_entity_escaped_for_plotly(hostile_report):
    page = _page_without_plotly(hostile_report.report)
    charts = page.rsplit("<script", 1)[1]
    assert "\\u0026lt;img src=x onerror=alert(1)\\u0026gt;" in charts  # plotly shows &lt;img...&gt; as the literal text


def test_secrets_are_redacted_everywhere(hostile_report):
    outputs = {
        "html": _page_without_plotly(hostile_report.report),
        "md": hostile_report.files["md"].read_text(encoding="utf-8"),
        "json": hostile_report.files["json"].read_text(encoding="utf-8"),
        **{p.name: p.read_text(encoding="utf-8") for p in hostile_report.files["csv"]},
    }
    for name, text in outputs.items():
        for secret in (hostile.SECRETS[0], "SECRETSECRETSECRET", hostile.SECRETS[2]):
            assert secret not in text, (name, secret)
    assert "[REDACTED]" in outputs["html"] and "[REDACTED]" in outputs["json"]
    doc = json.loads(outputs["json"])
    finding = next(f for f in doc["findings"] if f["finding_no"] == 999)
    assert finding["evidence"]["args"]["api_key"].endswith("[REDACTED]") and "Bearer [REDACTED]" in finding["evidence"]["first_result"]
    assert any("[REDACTED]" in (p["excerpt"] or "") for p in doc["problems"]["first"])


def test_markdown_cannot_carry_markup_or_links(hostile_report):
    md = hostile_report.files["md"].read_text(encoding="utf-8")
    for payload in hostile.PAYLOADS:
        assert payload not in md
    assert "<" not in md.replace("&lt;", "")  # no raw tag of any kind
    assert not re.search(r"(?<!\\)\]\(", md)  # no [text](url) link
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in md


def test_csv_names_are_data_not_formulas(hostile_report, tmp_path):
    import polars as pl

    from tokaudit.report.export import _defuse_formulas

    out = _defuse_formulas(pl.DataFrame({"tool": ["=cmd|' /C calc'!A0"]}))
    assert out["tool"][0].startswith("'=")
    tools_csv = next(p for p in hostile_report.files["csv"] if p.stem == "tools").read_text(encoding="utf-8")
    assert hostile.IMG in tools_csv  # CSV holds the name as data (a spreadsheet shows it, never renders it)
