"""Argument skeletons: a tool call's arguments with the parts that vary between calls masked.

Two calls that differ only by a page number, cursor, id or the wording of a long
string have the same skeleton, which is what loop and pagination detectors
compare. Keys and short literal strings are kept; numbers become ``<n>``,
id-like and long strings become ``<id>`` / ``<s:BUCKET>`` (length bucketed by
powers of two). The skeleton is bounded to ``MAX_SKELETON_CHARS``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

MAX_SKELETON_CHARS = 2000
_SHORT_STRING = 24
_ID_LIKE = re.compile(r"^(?=.*\d)[A-Za-z0-9_\-:.=+/]{6,}$")


def _mask(value: Any, depth: int = 0) -> Any:
    if depth > 8:
        return "<deep>"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "<n>"
    if isinstance(value, str):
        if _ID_LIKE.match(value):
            return "<id>"
        if len(value) > _SHORT_STRING:
            return f"<s:{1 << max(0, len(value) - 1).bit_length()}>"
        return value
    if isinstance(value, list):
        # Lists are summarised by the skeletons they contain, not their length,
        # so a batch of 3 and a batch of 4 similar items look alike.
        seen: list[Any] = []
        for item in value[:50]:
            masked = _mask(item, depth + 1)
            if masked not in seen:
                seen.append(masked)
        return seen
    if isinstance(value, dict):
        return {str(k): _mask(v, depth + 1) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    return "<?>"


def args_skeleton(raw: bytes | str) -> str:
    """Mask a tool call's JSON arguments (or free-text input) into a comparable skeleton.

    Examples:
        >>> args_skeleton(b'{"page": 3, "query": "open bugs", "cursor": "c2VjcmV0MTIz"}')
        '{"cursor":"<id>","page":"<n>","query":"open bugs"}'
    """
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        value = text
    skeleton = json.dumps(_mask(value), separators=(",", ":"), ensure_ascii=False)
    return skeleton[:MAX_SKELETON_CHARS]
