"""Building report files from a store: ``build_report`` for one report, ``write_dated_report`` for scheduled audits.

A scheduled audit writes ``DIR/<YYYY-MM-DD>/`` (UTC date of the run; a second run
the same day replaces it) and rewrites ``DIR/index.html``, which lists every dated
report in ``DIR`` with its headline numbers, read back from each ``report.json``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from tokaudit.config import Config
from tokaudit.errors import TokauditError
from tokaudit.ingest.base import utc_now
from tokaudit.report.data import Window, load_report_data, resolve_window
from tokaudit.report.model import Report, summarize
from tokaudit.store.engine import Store

FORMATS = ("html", "md", "json", "csv", "parquet")
DEFAULT_FORMATS = ("html", "md", "json")
FILE_NAMES = {"html": "report.html", "md": "report.md", "json": "report.json"}
INDEX_NAME = "index.html"
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class ReportResult:
    """What ``build_report`` wrote: the folder, the file per format, the computed report and timings."""

    out_dir: Path
    files: dict[str, Path | list[Path]]
    report: Report
    seconds: dict[str, float] = field(default_factory=dict)
    index: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """Paths written, timings and the headline numbers, as JSON-ready values (``--json``)."""
        return {
            "out_dir": str(self.out_dir),
            "files": {k: ([str(p) for p in v] if isinstance(v, list) else str(v)) for k, v in self.files.items()},
            "index": str(self.index) if self.index else None,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "headline": {
                k: self.report.headline[k] for k in ("cost_usd", "total_tokens", "requests", "sessions", "unpriced_requests", "tool_calls")
            },
            "findings": self.report.findings_summary,
        }


def parse_formats(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"html,md"`` → ``("html", "md")``, checked against :data:`FORMATS`."""
    items = [p.strip().lower() for p in (text.split(",") if isinstance(text, str) else text) if p.strip()]
    unknown = [p for p in items if p not in FORMATS]
    if unknown or not items:
        raise TokauditError(f"unknown report format(s): {', '.join(unknown) or '(none given)'}", hint=f"choose from: {','.join(FORMATS)}")
    return tuple(dict.fromkeys(items))


def build_report(
    store: Store,
    out_dir: str | Path,
    *,
    formats: str | tuple[str, ...] = DEFAULT_FORMATS,
    since: date | None = None,
    until: date | None = None,
    last: str | None = None,
    tz: str = "UTC",
    config: Config | None = None,
    run_id: int | None = None,
    today: date | None = None,
) -> ReportResult:
    """Write a report over a window (``since``/``until`` days, or the ``last`` ``7d``/``2w`` up to ``today``) to ``out_dir``.

    Findings come from audit run ``run_id`` (default: the latest). Formats: html
    (one self-contained page), md (summary), json (the same numbers), csv and
    parquet (the underlying tables, under ``tables/``).
    """
    formats = parse_formats(formats)
    config = config or Config()
    now = utc_now()
    window = resolve_window(since, until, last, today or now.date(), tz)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    data = load_report_data(store, config, window, run_id=run_id)
    seconds["load"] = time.perf_counter() - started
    mark = time.perf_counter()
    report = summarize(data, generated_at_utc=now)
    seconds["compute"] = time.perf_counter() - mark
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = _write(report, out, formats, seconds)
    seconds["total"] = time.perf_counter() - started
    return ReportResult(out_dir=out, files=files, report=report, seconds=seconds)


def _write(report: Report, out: Path, formats: tuple[str, ...], seconds: dict[str, float]) -> dict[str, Path | list[Path]]:
    from tokaudit.report.export import report_json, write_tables

    files: dict[str, Path | list[Path]] = {}
    if "html" in formats:
        from tokaudit.report.html import render_html

        mark = time.perf_counter()
        files["html"] = _write_text(out / FILE_NAMES["html"], render_html(report))
        seconds["html"] = time.perf_counter() - mark
    if "md" in formats:
        from tokaudit.report.markdown import render_markdown

        files["md"] = _write_text(out / FILE_NAMES["md"], render_markdown(report, html_name=FILE_NAMES["html"] if "html" in formats else None))
    if "json" in formats:
        files["json"] = _write_text(out / FILE_NAMES["json"], report_json(report))
    tables = [f for f in formats if f in ("csv", "parquet")]
    if tables:
        mark = time.perf_counter()
        written = write_tables(report, out, tuple(tables))
        for fmt in tables:
            files[fmt] = [p for p in written if p.suffix == f".{fmt}"]
        seconds["tables"] = time.perf_counter() - mark
    return files


def _write_text(path: Path, text: str) -> Path:
    # Write beside, then rename: a reader (or the index) never sees half a file.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def write_dated_report(
    store: Store,
    reports_dir: str | Path,
    *,
    formats: str | tuple[str, ...] = DEFAULT_FORMATS,
    since: date | None = None,
    until: date | None = None,
    last: str | None = None,
    tz: str = "UTC",
    config: Config | None = None,
    run_id: int | None = None,
    today: date | None = None,
) -> ReportResult:
    """Write a report to ``reports_dir/<today>/`` (UTC) and refresh ``reports_dir/index.html``.

    The JSON document is always written (the index reads its headline numbers).
    """
    formats = parse_formats(formats)
    if "json" not in formats:
        formats = (*formats, "json")
    day = today or utc_now().date()
    root = Path(reports_dir)
    result = build_report(
        store, root / day.isoformat(), formats=formats, since=since, until=until, last=last, tz=tz, config=config, run_id=run_id, today=day
    )
    result.index = refresh_index(root)
    return result


def refresh_index(reports_dir: str | Path) -> Path:
    """Rewrite ``reports_dir/index.html`` from the dated report folders in it (newest first)."""
    from tokaudit.report.html import render_index

    root = Path(reports_dir)
    entries = []
    for folder in sorted((p for p in root.iterdir() if p.is_dir() and _DATED.match(p.name)), key=lambda p: p.name, reverse=True):
        files = {fmt: name for fmt, name in FILE_NAMES.items() if (folder / name).is_file()}
        if not files:
            continue
        doc: dict[str, Any] | None
        try:
            doc = json.loads((folder / FILE_NAMES["json"]).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None  # listed as unreadable rather than hiding the folder
        if doc is not None and not isinstance(doc, dict):
            doc = None
        entries.append({"folder": folder.name, "files": files, "report": doc})
    return _write_text(root / INDEX_NAME, render_index(entries))


__all__ = ["FORMATS", "ReportResult", "Window", "build_report", "refresh_index", "write_dated_report"]
