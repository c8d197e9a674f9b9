"""What an ingest run reports (kept apart from the runner so a no-op run need not import DuckDB)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tokaudit.ingest.base import Problem


@dataclass
class IngestSummary:
    """What one ingest run did; ``lines_*`` count this run's lines only."""

    files_new: int = 0
    files_grown: int = 0
    files_replaced: int = 0
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": {
                "new": self.files_new,
                "grown": self.files_grown,
                "replaced": self.files_replaced,
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
        }
