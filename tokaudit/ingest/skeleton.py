"""Argument skeletons: a tool call's arguments with the parts that vary between calls masked.

Two calls that differ only by a page number, cursor, id or the wording of a long
string get the same skeleton, which is what loop and pagination detectors
compare. Keys and short literal strings are kept; numbers become ``<n>``,
id-like values (6+ characters with a digit and no spaces) become ``<id>``, and
long strings become ``<sBUCKET>`` (length rounded up to a power of two).

It works on the JSON text with a few regular-expression passes rather than by
decoding: ingest computes one skeleton per tool call, and decoding, walking and
re-encoding the arguments cost a third of all parse time. Arguments are
assumed to be written consistently by one agent (same key order and spacing),
which holds for the agents' own logs. The skeleton is bounded to
``MAX_SKELETON_CHARS`` and, by construction, drops the secrets a long token or
key would carry.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from tokaudit.redact import is_secret_key, may_hold_secret, redact

MAX_SKELETON_CHARS = 2000
_LONG_STRING_CHARS = 24

# One pass over the text: a value (after ':' ',' or '[' — keys are followed by ':', values are
# not) that is a long string, an id-like string, or a number. The long-string body is the
# unrolled form; the lookaheads only check its length and that an id has a digit.
_VALUE = re.compile(
    r'([:,\[]\s*)(?:'
    r'"((?=(?:[^"\\]|\\.){%d})[^"\\]*(?:\\.[^"\\]*)*)"'  # 2: long string
    r'|"((?=[^"\s]*\d)[A-Za-z0-9_\-:.=+/]{6,%d})"'  # 3: id-like string
    r"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"  # 4: number
    r")" % (_LONG_STRING_CHARS + 1, _LONG_STRING_CHARS),
    re.S,
)


def _replace(match: re.Match[str]) -> str:
    prefix, long_string, id_string, _number = match.groups()
    if long_string is not None:
        return f'{prefix}"<s{1 << (len(long_string) - 1).bit_length()}>"'
    if id_string is not None:
        return f'{prefix}"<id>"'
    return f"{prefix}<n>"


def args_skeleton(raw: bytes | str) -> str:
    """Mask a tool call's JSON arguments (or free-text input) into a comparable skeleton.

    Examples:
        >>> args_skeleton(b'{"page":3,"query":"open bugs","cursor":"c2VjcmV0MTIz"}')
        '{"page":<n>,"query":"open bugs","cursor":"<id>"}'
        >>> args_skeleton('{"path": "/srv/app/src/components/Widget.tsx", "limit": 50}')
        '{"path": "<s64>", "limit": <n>}'
        >>> args_skeleton("*** Begin Patch\\n*** Update File: a.py")
        '"<s64>"'
    """
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        # Free-text input (custom tools such as apply_patch): treat it as one string value.
        text = "[" + '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"' + "]"
        return _mask(text)[1:-1][:MAX_SKELETON_CHARS]
    return _mask(text)[:MAX_SKELETON_CHARS]


def _mask(text: str) -> str:
    return _VALUE.sub(_replace, text)


# --- argument values, for following where a call's arguments came from --------------------------

MAX_ARG_VALUES = 32
MAX_ARG_VALUE_CHARS = 64
# A value without spaces (a URL, a path, a token) keeps more: a cursor or page number sits at the end
# of a URL's query string. Longer text (code, an edit, a shell command, a query) keeps its first 64
# characters and its last 32, joined by ``TEXT_CUT``: SQL's OFFSET sits at the end.
MAX_ARG_TOKEN_CHARS = 128
TEXT_CUT = " … "
TEXT_TAIL_CHARS = 32
_SPACE = re.compile(r"\s")
# A URL in a long text (a shell command: ``curl -H 'If-None-Match: …' https://host/path?query``) that the head
# and tail would cut is kept whole between them (up to MAX_ARG_TOKEN_CHARS): the host is the server the agent
# called, and its path and query the call. Only a text's first URL_SCAN_CHARS are searched (a file written
# whole can be long).
_URL = re.compile(r"https?://[^\s'\"<>|;)`]+")
URL_SCAN_CHARS = 2048
# So is, in a text without such a URL, its first token (16 characters or more, letters and digits, no spaces) the
# head and tail would cut: a cursor or id written into a query (GraphQL's ``after: "…"``, SQL's ``WHERE id > '…'``)
# is what changes from call to call, and it sits mid-text.
_MID_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=.:-])(?=[A-Za-z_+/=.:-]*[0-9])(?=[0-9_+/=.:-]*[A-Za-z])[A-Za-z0-9_+/=.:-]{16,}")


def _cut(value: str) -> str:
    """``value`` bounded (see ``args_values``).

    Examples:
        >>> _cut("SELECT sku, qty, warehouse, updated_at FROM stock WHERE region = 'NL' ORDER BY sku LIMIT 50 OFFSET 150")
        'SELECT sku, qty, warehouse, updated_at FROM stock WHERE region = … ORDER BY sku LIMIT 50 OFFSET 150'
        >>> print(_cut("sleep 10 && curl -si -H 'If-None-Match: W/ae6c08a154c0' 'https://beds.example/api/occupancy?site=n' | head -40"))
        sleep 10 && curl -si -H 'If-None-Match: W/ae6c08a154c0' ' … https://beds.example/api/occupancy?site=n … api/occupancy?site=n' | head -40
        >>> print(_cut('query Rows { rows(filter: {site: "north"}, first: 50, after: "eyJvIjoxMywicyI6IjBiZTc1YSJ9") { edges { node { id } } } }'))
        query Rows { rows(filter: {site: "north"}, first: 50, after: " … eyJvIjoxMywicyI6IjBiZTc1YSJ9 … J9") { edges { node { id } } } }
    """
    if len(value) <= MAX_ARG_VALUE_CHARS:
        return value
    head = value[:MAX_ARG_TOKEN_CHARS]
    if not _SPACE.search(head):
        return head
    if len(value) <= MAX_ARG_VALUE_CHARS + len(TEXT_CUT) + TEXT_TAIL_CHARS:
        return value
    tail_at = len(value) - TEXT_TAIL_CHARS
    kept = _URL.search(value, 0, URL_SCAN_CHARS) if "://" in value[:URL_SCAN_CHARS] else None
    if kept is None:
        kept = next((m for m in _MID_TOKEN.finditer(value, 0, URL_SCAN_CHARS) if m.end() > MAX_ARG_VALUE_CHARS), None)
    if kept is not None and kept.end() > MAX_ARG_VALUE_CHARS and kept.start() < tail_at:
        # The head stops before it (no piece of it is left there to read as a host or token of its own).
        head = value[: min(MAX_ARG_VALUE_CHARS, kept.start())]
        return head + TEXT_CUT + kept.group()[:MAX_ARG_TOKEN_CHARS] + TEXT_CUT + value[tail_at:]
    return value[:MAX_ARG_VALUE_CHARS] + TEXT_CUT + value[tail_at:]

_DECODER = msgspec.json.Decoder()


def _as_text(data: bytes) -> str:
    """Free-text (or undecodable) arguments as one value: their first characters."""
    return data[: MAX_ARG_VALUE_CHARS * 4].decode("utf-8", "replace")[:MAX_ARG_VALUE_CHARS]


def args_values(raw: bytes | str) -> list[str]:
    """The string and number values of a call's JSON arguments, in order, each bounded: text to its
    first 64 characters and its last 32, around `` … ``; a value without spaces to 128 (a URL keeps
    its query string).

    Analysis compares them slot by slot with the previous call of the same tool
    to tell a server-steered chain — a counter that goes up, a cursor or scope
    copied from the previous result — from batch work whose values come from
    elsewhere (``analyze.frames``). Values under a credential's name
    (``api_key``, ``password`` …) and credential-shaped values are redacted;
    both the count and the length are bounded, so a huge argument stores
    little. Free-text input (or arguments that are not valid JSON) is one value.

    Examples:
        >>> args_values(b'{"page":3,"query":"open bugs","cursor":"c2VjcmV0MTIz"}')
        ['3', 'open bugs', 'c2VjcmV0MTIz']
        >>> args_values('{"api_key": "abcd1234efgh", "n": [1, 2.5, true, null]}')
        ['[REDACTED]', '1', '2.5']
        >>> args_values("*** Begin Patch")
        ['*** Begin Patch']
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if not data.lstrip().startswith((b"{", b"[")):
        return [redact(_as_text(data))] if data else []
    try:
        # Decoding in C and walking the result beats scanning the text with a pattern tenfold on
        # long arguments (file contents), and gives the values unescaped, as results show them.
        doc = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return [redact(_as_text(data))]
    found: list[tuple[str | None, str]] = []
    stack: list[tuple[str | None, Any]] = [(None, doc)]
    while stack and len(found) < MAX_ARG_VALUES:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed([(str(k), v) for k, v in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([(key, v) for v in value]))
        elif isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            found.append((key, _cut(value) if isinstance(value, str) else str(value)[:MAX_ARG_VALUE_CHARS]))
    # One scan of what is kept (keys and cut values, not the whole argument — a file's content can be
    # long) decides whether anything needs redacting; most arguments hold no credential literal at all.
    if not may_hold_secret(" ".join(f"{k} {v}" for k, v in found)):
        return [v for _, v in found]
    return ["[REDACTED]" if k is not None and is_secret_key(k) else redact(v) for k, v in found]
