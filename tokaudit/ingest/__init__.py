"""Log formats tokaudit reads: the registry, and recognising a file's format.

Each format is one module with ``FORMAT``, ``AGENT``, ``sniff(head)``,
``parse(lines, path=, state=)`` and ``default_roots()``. ``INGESTERS`` maps a
format name to its module; tests parametrize over it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

import msgspec

from tokaudit.errors import UnknownFormatError
from tokaudit.ingest.base import BOM
from tokaudit.ingest.reader import line_separator

# Format name -> (module, file names a folder walk picks up, sidecar names that are not logs).
# The names live here, not only in the modules, so that walking a folder (every ingest, even one
# that finds nothing new) never imports the parsers; a test checks they match the modules' own.
_FORMATS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "claude-code": ("tokaudit.ingest.claude_code", ("*.jsonl",), ("agent-*.meta.json",)),
    "codex": ("tokaudit.ingest.codex", ("*.jsonl",), ()),
    "generic": ("tokaudit.ingest.generic", ("*.jsonl",), ()),
    "mcp-jsonrpc": ("tokaudit.ingest.mcp_jsonrpc", ("*.jsonl",), ()),
    "mcp-desktop": ("tokaudit.ingest.mcp_desktop", ("mcp.log", "mcp.old.log", "mcp-server-*.log"), ()),
    "otel": ("tokaudit.ingest.otel", ("*.jsonl", "*.json"), ()),
    "openhands": ("tokaudit.ingest.openhands", ("*.json",), ()),
    "openhands-eval": ("tokaudit.ingest.openhands_eval", ("*.jsonl",), ()),
    "swe-agent": ("tokaudit.ingest.swe_agent", ("*.traj",), ()),
}
_MODULES = {name: module for name, (module, _, _) in _FORMATS.items()}

# A parser's revision, raised when a fix changes what it makes of lines it has read before: the next
# ingest reads that format's files again, whole, replacing their rows, so a store gets the fix without
# being rebuilt. Codex 2: a fork's replayed model carries over. Every format one up (codex 3): a short listing's
# values count in the result signature (``ingest.base.MIN_VALUE_WORDS``), and a URL a long text's head and tail
# would cut is kept between them (``ingest.skeleton._cut``). Every format one up again (codex 4): a listing's ids get
# MinHash bins of their own, a long text keeps a token its head and tail would cut (a cursor inside a query), and a
# result's excerpt prefers a page's next-page pointer to its records' cursors. Codex 5 and OpenHands 4: a result's
# features are read from the answer's own text inside the JSON the agent wrote around it (a shell's output, an MCP
# answer's text blocks).
_REVISIONS = {fmt: 3 for fmt in _FORMATS} | {"codex": 5, "openhands": 4}
# Where a file's parser revision is kept: in its ``sources.parser_state`` (JSON), beside the parser's own state.
REVISION_KEY = "_parser_revision"


def parser_revision(fmt: str) -> int:
    """The revision of format ``fmt``'s parser (see ``_REVISIONS``)."""
    return _REVISIONS.get(fmt, 1)


def parser_revisions() -> dict[str, int]:
    """Every format's parser revision."""
    return {fmt: parser_revision(fmt) for fmt in _MODULES}


def file_patterns() -> tuple[set[str], set[str]]:
    """(names any format reads, names of sidecar files that are not logs), without importing a parser."""
    wanted = {p for _, patterns, _ in _FORMATS.values() for p in patterns}
    sidecars = {p for _, _, patterns in _FORMATS.values() for p in patterns}
    return wanted, sidecars



class _Registry(Mapping[str, ModuleType]):
    """Format name -> module, imported on first use (a no-op ingest never parses)."""

    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(_MODULES[name])

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


INGESTERS: Mapping[str, ModuleType] = _Registry()

SNIFF_BYTES = 64 * 1024
SNIFF_LINES = 5


def get_format(name: str) -> ModuleType:
    """The format module called ``name``, or a clear error listing the known ones."""
    try:
        return INGESTERS[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown format {name!r}", hint=f"known formats: {', '.join(sorted(INGESTERS))}"
        ) from None


def head_objects(head: bytes) -> list[Any]:
    """The first few JSON values of a file's head (lines that do not parse are passed over)."""
    objs: list[Any] = []
    for raw in head.removeprefix(BOM).split(line_separator(head))[:50]:
        if not raw.strip():
            continue
        try:
            objs.append(msgspec.json.decode(raw))
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue  # nested too deep to judge: the parser records it as a problem of its line
        if len(objs) >= SNIFF_LINES:
            break
    return objs


def sniff_format(head: bytes) -> str | None:
    """Name of the one format whose ``sniff`` accepts this file head, else None.

    Formats judge the first complete JSON lines. When the head holds none (a
    first line longer than the sniff window, such as a Claude Code
    ``file-history-snapshot`` of several MB) or no format claims them, they
    judge its first bytes.
    """
    objs = head_objects(head)
    matches = [name for name, module in INGESTERS.items() if module.sniff(objs)] if objs else []
    if not matches:
        # No JSON line decoded, or none any format claims (a text log whose stderr holds a stray
        # JSON line): let the formats judge the file's first bytes.
        first = head.lstrip()[:4096]
        matches = [name for name, module in INGESTERS.items() if module.sniff_prefix(first)]
    return matches[0] if len(matches) == 1 else None
