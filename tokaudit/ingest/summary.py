"""What an ingest run reports (kept apart from the runner so a no-op run need not import DuckDB)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tokaudit.ingest.base import Problem

if TYPE_CHECKING:
    from tokaudit.ingest.discover import Discovery


MAX_DOUBTS_SHOWN = 5


@dataclass
class IngestSummary:
    """What one ingest run did; ``lines_*`` count this run's lines only."""

    files_new: int = 0
    files_grown: int = 0
    files_replaced: int = 0
    files_reparsed: int = 0  # of the replaced: unchanged files read again because their parser was fixed
    files_unchanged: int = 0
    files_failed: int = 0
    files_not_a_log: int = 0  # .json files no format recognises (skipped, not problems)
    lines_read: int = 0
    lines_ok: int = 0
    lines_skipped: int = 0
    lines_problem: int = 0
    lines_pending: int = 0
    skipped_by_rule: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    tool_calls_linked: int = 0  # MCP-side records matched to an agent's record of the same call (ingest.link)
    problems: list[tuple[str, Problem]] = field(default_factory=list)
    missing_paths: list[str] = field(default_factory=list)
    unreadable_paths: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): met on the walk, not read
    format_doubts: list[tuple[str, str]] = field(default_factory=list)  # (path, why): a forced --format that used nothing

    @classmethod
    def of_discovery(cls, found: Discovery, **counts: int) -> IngestSummary:
        """A summary that starts from what the walk could not find or read."""
        return cls(missing_paths=list(found.missing), unreadable_paths=list(found.unreadable), **counts)

    @property
    def incomplete(self) -> bool:
        """True when something given or met was not fully read (what ``--strict`` fails on)."""
        return bool(self.lines_problem or self.files_failed or self.missing_paths or self.unreadable_paths or self.format_doubts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": {
                "new": self.files_new,
                "grown": self.files_grown,
                "replaced": self.files_replaced,
                "reparsed": self.files_reparsed,
                "unchanged": self.files_unchanged,
                "failed": self.files_failed,
                "not_a_log": self.files_not_a_log,
            },
            "lines": {
                "read": self.lines_read,
                "used": self.lines_ok,
                "skipped": self.lines_skipped,
                "problem": self.lines_problem,
                "pending": self.lines_pending,
            },
            "skipped_by_rule": dict(sorted(self.skipped_by_rule.items())),
            "rows": {
                "sessions": self.sessions,
                "llm_calls": self.llm_calls,
                "tool_calls": self.tool_calls,
                "tool_calls_linked": self.tool_calls_linked,
            },
            "problems": [
                {"path": path, "line_no": p.line_no, "kind": p.kind, "message": p.message, "excerpt": p.excerpt}
                for path, p in self.problems
            ],
            "missing_paths": self.missing_paths,
            "unreadable_paths": [{"path": path, "reason": reason} for path, reason in self.unreadable_paths],
            "format_doubts": [{"path": path, "reason": reason} for path, reason in self.format_doubts],
        }


def summary_lines(summary: IngestSummary) -> list[str]:
    """The plain-text summary of an ingest run (no rich needed: a no-op ingest must start fast)."""
    f = summary
    lines = [
        f"files: {f.files_new} new, {f.files_grown} grown, {f.files_replaced} replaced, "
        f"{f.files_unchanged} unchanged, {f.files_failed} failed"
        + (f" ({f.files_reparsed} replaced as tokaudit reads their format better now)" if f.files_reparsed else "")
        + (f", {f.files_not_a_log} .json not a log (skipped)" if f.files_not_a_log else ""),
        f"lines: {f.lines_read:,} read = {f.lines_ok:,} used + {f.lines_skipped:,} skipped by rule + {f.lines_problem:,} problems"
        + (f"; {f.lines_pending} partial last line(s) left for the next run" if f.lines_pending else ""),
    ]
    if f.skipped_by_rule:
        lines.append("skipped: " + ", ".join(f"{rule} {n:,}" for rule, n in sorted(f.skipped_by_rule.items())))
    lines.append(f"rows: {f.sessions:,} sessions, {f.llm_calls:,} model requests, {f.tool_calls:,} tool calls")
    if f.tool_calls_linked:
        lines.append(f"linked: {f.tool_calls_linked:,} MCP transcript records to the agent's record of the same call (counted once)")
    lines.extend(f"missing: {path}" for path in f.missing_paths)
    lines.extend(f"not read: {path} ({reason})" for path, reason in f.unreadable_paths)
    for path, reason in f.format_doubts[:MAX_DOUBTS_SHOWN]:
        lines.append(f"wrong format? {path}: {reason} (drop --format to sniff each file)")
    if len(f.format_doubts) > MAX_DOUBTS_SHOWN:
        lines.append(f"wrong format? {len(f.format_doubts) - MAX_DOUBTS_SHOWN} more file(s) like these (--json lists all)")
    return lines
