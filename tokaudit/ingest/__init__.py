"""Log formats tokaudit reads: the registry, and recognising a file's format.

Each format is one module with ``FORMAT``, ``AGENT``, ``sniff(head)``,
``parse(lines, path=, state=)`` and ``default_roots()``. ``INGESTERS`` maps a
format name to its module; tests parametrize over it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import msgspec

from tokaudit.errors import UnknownFormatError
from tokaudit.ingest import claude_code, codex

INGESTERS: dict[str, ModuleType] = {
    claude_code.FORMAT: claude_code,
    codex.FORMAT: codex,
}

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
    for raw in head.split(b"\n")[:50]:
        if not raw.strip():
            continue
        try:
            objs.append(msgspec.json.decode(raw))
        except (msgspec.DecodeError, UnicodeDecodeError):
            continue
        if len(objs) >= SNIFF_LINES:
            break
    return objs


def sniff_format(head: bytes) -> str | None:
    """Name of the one format whose ``sniff`` accepts this file head, else None."""
    objs = head_objects(head)
    if not objs:
        return None
    matches = [name for name, module in INGESTERS.items() if module.sniff(objs)]
    return matches[0] if len(matches) == 1 else None
