"""What the gate writes: terminal table, JUnit XML, SARIF 2.1.0, GitHub annotations and step summary.

Pure builders from a :class:`GateResult` to text or JSON-ready dicts; the only
I/O is ``render_table`` (a rich console). Member names come from logs — an
MCP server names its own tools — so every format escapes them its own way:
rich ``Text`` cells (no markup), XML-illegal characters dropped, workflow-command
data percent-encoded (a newline in a tool name cannot start a new ``::command``),
Markdown cells with ``|`` and HTML escaped.

* **JUnit**: one ``<testsuite>`` per budget (or max_increase rule), one
  ``<testcase>`` per scope member; ``fail`` is a ``<failure>``, ``inconclusive``
  is ``<skipped>``, ``warn`` passes with a ``<system-out>`` note (a ``<failure>``
  under ``--fail-on-warn``).
* **SARIF**: one run of the ``tokaudit`` driver; a rule per detector and per
  budget; a result per finding (level from its severity) and per warn/fail
  verdict (``error`` / ``warning``), located at the session's log file or, for
  scopes wider than a session, at the budget file.
* **GitHub**: ``::error`` / ``::warning`` workflow commands for fail / warn
  verdicts (at most ``MAX_ANNOTATIONS`` of each), and a Markdown summary for
  ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tokaudit.gate.budgets import METRICS
from tokaudit.gate.evaluate import GateResult, Verdict
from tokaudit.redact import printable

if TYPE_CHECKING:
    from rich.console import Console

    from tokaudit.analyze.detectors import Finding

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
MAX_ANNOTATIONS = 50  # per level; GitHub shows 10 of each per step, the rest only in the log
MAX_SUMMARY_ROWS = 200  # the step summary is capped at 1 MiB per step
_SEVERITY_LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
_VERDICT_ORDER = {"fail": 0, "warn": 1, "inconclusive": 2, "pass": 3}
# Characters XML 1.0 cannot carry at all (escaping does not help): C0 controls but tab/LF/CR, surrogates, U+FFFE/FFFF.
_CONTROL = re.compile("[\x00-\x1f\x7f]")  # no control characters (newlines included) in a Markdown table cell
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# --- formatting ---------------------------------------------------------------------------------


def format_value(value: float | None, unit: str) -> str:
    """A value in its unit, for people.

    Examples:
        >>> format_value(1234567, "tokens"), format_value(0.41420, "usd"), format_value(0.25, "fraction"), format_value(None, "usd")
        ('1,234,567', '$0.4142', '+25.0%', '—')
    """
    if value is None:
        return "—"
    if unit == "usd":
        return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"
    if unit == "fraction":
        return f"{value * 100:+.1f}%"
    return f"{value:,.0f}"


def format_limit(v: Verdict) -> str:
    """``warn X · fail Y`` (levels that are set).

    Examples:
        >>> format_limit(Verdict("b", "run", "all", "cost_usd", "usd", 1.0, 2.0, None, "pass"))
        'warn $2.00'
    """
    parts = [f"{name} {format_value(level, v.unit)}" for name, level in (("warn", v.warn), ("fail", v.fail)) if level is not None]
    return " · ".join(parts)


def describe(v: Verdict) -> str:
    """One sentence for a verdict: what was measured, against what, and the outcome."""
    what = v.metric.removesuffix("_usd").replace("_", " ")  # "cost", "replay cost", "p95 cost", "peak context tokens"
    where = "the whole run" if v.scope == "run" else f"{v.scope} {v.member}"
    text = f"{what} of {where} is {format_value(v.value, v.unit)} ({format_limit(v)}): {v.verdict}"
    if v.kind == "regression":
        text = f"{what} of task {v.member} changed {format_value(v.value, v.unit)} over the baseline ({format_limit(v)}): {v.verdict}"
    return f"{text}; {v.note}" if v.note else text


def _grouped(verdicts: Iterable[Verdict]) -> list[tuple[str, list[Verdict]]]:
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        groups.setdefault(v.budget, []).append(v)
    return list(groups.items())


def table_rows(result: GateResult, *, verbose: bool = False) -> list[tuple[str, str, str, str, str]]:
    """(budget, member, value, limit, verdict) rows: every budget, its non-passing members one by one and,
    unless ``verbose``, its passing members folded into one row that shows the largest value."""
    rows = []
    for name, group in _grouped(result.verdicts):
        shown = group if verbose else [v for v in group if v.verdict != "pass"]
        passing = [v for v in group if v.verdict == "pass"]
        for v in sorted(shown, key=lambda v: _VERDICT_ORDER[v.verdict]):
            rows.append((name, v.member, format_value(v.value, v.unit), format_limit(v), v.verdict))
        if passing and not verbose:
            top = max(passing, key=lambda v: v.value or 0.0)
            label = top.member if len(passing) == 1 else f"{len(passing)} {top.scope}s (largest: {top.member})"
            rows.append((name, label, format_value(top.value, top.unit), format_limit(top), "pass"))
    return rows


def headline(result: GateResult, fail_on_warn: bool = False) -> str:
    """``FAIL (exit 1): 70 checks — 62 pass, 6 warn, 2 fail, 0 inconclusive; 8 sessions``."""
    code = result.exit_code(fail_on_warn)
    counts = result.counts()
    word = "FAIL" if code else ("PASS with warnings" if counts["warn"] else "PASS")
    checks = ", ".join(f"{n} {k}" for k, n in counts.items())
    return f"{word} (exit {code}): {len(result.verdicts)} checks — {checks}; {result.sessions} sessions, {len(result.findings)} findings"


def render_table(result: GateResult, console: Console, *, verbose: bool = False, fail_on_warn: bool = False) -> None:
    """Print the table of every budget with value, limit and verdict, then the headline and notes."""
    from rich.table import Table

    from tokaudit.report.terminal import safe_text

    style = {"fail": "bold red", "warn": "yellow", "inconclusive": "dim", "pass": "green"}
    table = Table(title="tokaudit gate", title_justify="left")
    for header, justify in (("budget", "left"), ("member", "left"), ("value", "right"), ("limit", "left"), ("verdict", "left")):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for budget, member, value, limit, verdict in table_rows(result, verbose=verbose):
        # Text cells: a member named "[bold]x" (logs are untrusted) is shown as written, not as markup.
        table.add_row(safe_text(budget), safe_text(member), safe_text(value), safe_text(limit), safe_text(verdict, style=style[verdict]))
    console.print(table)
    console.print(safe_text(headline(result, fail_on_warn)))
    for note in result.notes:
        console.print(safe_text(f"note: {note}", style="dim"))


# --- JUnit --------------------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", text)


def junit_xml(result: GateResult, *, fail_on_warn: bool = False) -> str:
    """JUnit XML: one testsuite per budget, one testcase per scope member (see the module docstring)."""
    counts = result.counts()
    failures = counts["fail"] + (counts["warn"] if fail_on_warn else 0)
    root = ET.Element(
        "testsuites",
        name="tokaudit gate",
        tests=str(len(result.verdicts)),
        failures=str(failures),
        errors="0",
        skipped=str(counts["inconclusive"]),
        time=f"{result.seconds:.3f}",
    )
    for name, group in _grouped(result.verdicts):
        failed = sum(1 for v in group if v.verdict == "fail" or (fail_on_warn and v.verdict == "warn"))
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml_text(name),
            tests=str(len(group)),
            failures=str(failed),
            errors="0",
            skipped=str(sum(1 for v in group if v.verdict == "inconclusive")),
            time="0",
        )
        for v in group:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"tokaudit.gate.{name}"), name=_xml_text(v.member), time="0")
            if v.location:
                case.set("file", _xml_text(v.location))
            message = _xml_text(describe(v))
            if v.verdict == "fail" or (fail_on_warn and v.verdict == "warn"):
                ET.SubElement(case, "failure", message=message, type=v.verdict).text = message
            elif v.verdict == "inconclusive":
                ET.SubElement(case, "skipped", message=message)
            elif v.verdict == "warn":
                ET.SubElement(case, "system-out").text = f"WARNING: {message}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- SARIF --------------------------------------------------------------------------------------


def artifact_uri(path: str, base: str | None = None) -> str:
    """A URI reference for a file: relative (POSIX, percent-encoded) when under ``base`` (default: cwd), else file://.

    Examples:
        >>> artifact_uri("/repo/logs/a b.jsonl", "/repo"), artifact_uri("/elsewhere/x.jsonl", "/repo")
        ('logs/a%20b.jsonl', 'file:///elsewhere/x.jsonl')
    """
    base = base or os.getcwd()
    p = Path(os.path.abspath(path))
    try:
        return quote(p.relative_to(os.path.abspath(base)).as_posix())
    except ValueError:
        return p.as_uri()


def _location(path: str | None) -> list[dict[str, Any]]:
    if not path:
        return []
    return [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(path)}, "region": {"startLine": 1}}}]


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def _detector_title(name: str) -> str:
    from tokaudit.analyze.detectors import DETECTORS

    try:
        return str(getattr(DETECTORS[name], "TITLE", name))
    except KeyError:
        return name


def sarif_log(result: GateResult, *, fail_on_warn: bool = False, config_file: str | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log of the findings and the warn/fail verdicts (valid against the OASIS schema)."""
    from tokaudit import __version__

    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}

    def rule(rule_id: str, text: str, help_text: str, level: str) -> int:
        if rule_id not in index:
            index[rule_id] = len(rules)
            rules.append(
                {
                    "id": rule_id,
                    "shortDescription": {"text": text},
                    "fullDescription": {"text": help_text},
                    "defaultConfiguration": {"level": level},
                }
            )
        return index[rule_id]

    results: list[dict[str, Any]] = []
    for f in result.findings:
        rid = f"detector/{f.detector}"
        level = _SEVERITY_LEVEL.get(f.severity, "warning")
        i = rule(rid, _detector_title(f.detector), f"tokaudit detector {f.detector}: {_detector_title(f.detector)}", "warning")
        results.append(
            {
                "ruleId": rid,
                "ruleIndex": i,
                "level": level,
                "message": {"text": f.explanation or f"{f.metric} = {f.value:g} ({f.threshold})"},
                "locations": _location(result.session_files.get(f.session_id)),
                "partialFingerprints": {"tokauditFinding/v1": _fingerprint(f.detector, f.session_id, f.first_turn, f.last_turn, f.tool_key)},
                "properties": _finding_properties(f),
            }
        )
    for v in result.verdicts:
        if v.verdict not in ("fail", "warn"):
            continue
        rid = f"budget/{v.budget}"
        metric = METRICS.get(v.metric)
        help_text = metric.description if metric else f"increase of the task's {v.metric} over the saved baseline"
        i = rule(rid, f"Budget {v.budget}", f"{v.budget}: {help_text}", "error")
        level = "error" if v.verdict == "fail" or fail_on_warn else "warning"
        results.append(
            {
                "ruleId": rid,
                "ruleIndex": i,
                "level": level,
                "message": {"text": describe(v)},
                "locations": _location(v.location or config_file),
                "partialFingerprints": {"tokauditBudget/v1": _fingerprint(v.budget, v.member)},
                "properties": {
                    "scope": v.scope,
                    "member": v.member,
                    "metric": v.metric,
                    "unit": v.unit,
                    "value": v.value,
                    "warn": v.warn,
                    "fail": v.fail,
                    "verdict": v.verdict,
                },
            }
        )
    for r in results:
        if not r["locations"]:
            del r["locations"]
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "tokaudit", "version": __version__, "semanticVersion": __version__, "rules": rules}},
                "invocations": [{"executionSuccessful": True, "exitCode": result.exit_code(fail_on_warn)}],
                "results": results,
            }
        ],
    }


def _finding_properties(f: Finding) -> dict[str, Any]:
    props = {
        "detector": f.detector,
        "severity": f.severity,
        "session_id": f.session_id,
        "first_turn": f.first_turn,
        "last_turn": f.last_turn,
        "metric": f.metric,
        "value": f.value,
        "threshold": f.threshold,
        "excess_tokens": f.excess_tokens,
        "excess_usd": f.excess_usd,
        "tool_key": f.tool_key,
    }
    # JSON cannot carry NaN/inf; a detector value of that kind is dropped rather than breaking the log.
    return {k: v for k, v in props.items() if not (isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))))}


# --- GitHub Actions -----------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    # GitHub's own escapes first; any other control character (a terminal escape that would recolour
    # or retitle the log view) is then shown as its escape.
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(result: GateResult, *, fail_on_warn: bool = False, base: str | None = None) -> list[str]:
    """``::error`` / ``::warning`` workflow commands for fail / warn verdicts (warn as error under ``fail_on_warn``).

    Examples:
        >>> r = GateResult([Verdict("run.cost_usd", "run", "all", "cost_usd", "usd", 9.0, None, 5.0, "fail")])
        >>> github_annotations(r)
        ['::error title=tokaudit budget run.cost_usd::cost of the whole run is $9.00 (fail $5.00): fail']
    """
    out: list[str] = []
    counts = {"error": 0, "warning": 0}
    for v in result.verdicts:
        if v.verdict not in ("fail", "warn"):
            continue
        level = "error" if v.verdict == "fail" or fail_on_warn else "warning"
        counts[level] += 1
        if counts[level] > MAX_ANNOTATIONS:
            continue
        props = []
        if v.location:
            props.append(f"file={_escape_property(artifact_uri(v.location, base).removeprefix('file://'))}")
        props.append(f"title={_escape_property(f'tokaudit budget {v.budget}')}")
        out.append(f"::{level} {','.join(props)}::{_escape_data(describe(v))}")
    for level, n in counts.items():
        if n > MAX_ANNOTATIONS:
            out.append(f"::notice title=tokaudit::{n - MAX_ANNOTATIONS} more {level} verdicts are in the step summary and the reports")
    return out


def _md(text: str) -> str:
    """tokaudit's own text (the headline, budget names, values) as a one-line Markdown table cell."""
    return _CONTROL.sub(" ", html.escape(text, quote=False).replace("|", "\\|"))


def _md_log(text: str, limit: int = 160) -> str:
    """Text that comes from logs (member names, paths in notes): inert in Markdown, since GitHub
    renders inline HTML, links and images in a step summary."""
    from tokaudit.report.numbers import md_text

    return md_text(text, limit)


def step_summary_markdown(result: GateResult, *, fail_on_warn: bool = False) -> str:
    """The Markdown appended to ``$GITHUB_STEP_SUMMARY``: headline, the budget table, notes."""
    lines = [f"## tokaudit gate: {_md(headline(result, fail_on_warn))}", ""]
    rows = table_rows(result)
    lines += ["| budget | member | value | limit | verdict |", "|---|---|--:|---|---|"]
    icon = {"fail": "❌ fail", "warn": "⚠️ warn", "inconclusive": "➖ inconclusive", "pass": "✅ pass"}
    for budget, member, value, limit, verdict in rows[:MAX_SUMMARY_ROWS]:
        lines.append(f"| {_md(budget)} | {_md_log(member)} | {_md(value)} | {_md(limit)} | {icon[verdict]} |")
    if len(rows) > MAX_SUMMARY_ROWS:
        lines.append(f"\n…and {len(rows) - MAX_SUMMARY_ROWS} more rows (see the JUnit or JSON output).")
    if result.findings:
        by = {}
        for f in result.findings:
            by[f.severity] = by.get(f.severity, 0) + 1
        lines += ["", "Findings: " + ", ".join(f"{n} {s}" for s, n in sorted(by.items(), key=lambda kv: -_SEV_RANK.get(kv[0], 0)))]
    for note in result.notes:
        lines += ["", f"> {_md_log(note, limit=600)}"]
    return "\n".join(lines) + "\n"


_SEV_RANK = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
