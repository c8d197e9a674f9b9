"""What every format parser produces, and the helpers they share.

A parser is a pure function ``parse(lines, *, path, state) -> ParseResult``:
it gets numbered lines (already split, size-bounded and complete), returns
canonical rows keyed by their natural keys, and counts every line as used,
skipped by a named rule, or a problem. It never touches the database, the
clock or the environment; ``state`` carries what it needs to resume a file
that has grown since the last run.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple, Protocol

import msgspec

from tokaudit.redact import excerpt, redact


class Line(NamedTuple):
    """One complete input line: 1-based number, byte offset of its start, its bytes (no newline)."""

    line_no: int
    byte_offset: int
    data: bytes


@dataclass
class Problem:
    """A line (or, with line_no 0, a whole file) that could not be used."""

    line_no: int
    byte_offset: int
    kind: str
    message: str
    excerpt: str | None = None


@dataclass
class ParseResult:
    """Rows and line accounting from one parse of (part of) one file.

    Rows are dicts keyed by their table's natural key, so a parser can merge
    several lines that describe the same request or tool call.
    """

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    llm_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: dict[tuple[int, str], dict[str, Any]] = field(default_factory=dict)
    tool_defs: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    lines_ok: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def lines_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def lines_problem(self) -> int:
        """Problem lines; a problem with line_no 0 is about the whole file, not a line."""
        return sum(1 for p in self.problems if p.line_no > 0)

    @property
    def lines_read(self) -> int:
        return self.lines_ok + self.lines_skipped + self.lines_problem

    def problem(self, line: Line, kind: str, message: str) -> None:
        """Record ``line`` as unusable, with a short redacted excerpt."""
        self.problems.append(Problem(line.line_no, line.byte_offset, kind, message, excerpt(line.data)))

    def decode_problem(self, line: Line, exc: UnicodeDecodeError | msgspec.DecodeError | RecursionError) -> None:
        """Record why a line could not be decoded: bad bytes, bad JSON, a field of the wrong type, or nesting too deep."""
        if isinstance(exc, RecursionError):
            self.problem(line, "too-deep", "JSON nested too deeply to decode")
        elif isinstance(exc, UnicodeDecodeError):
            self.problem(line, "invalid-utf8", f"not UTF-8 at byte {exc.start}")
        elif isinstance(exc, msgspec.ValidationError):
            self.problem(line, "wrong-type", f"unexpected field type: {exc}")
        else:
            self.problem(line, "invalid-json", f"not valid JSON: {exc}")

    def add_session(self, row: dict[str, Any]) -> None:
        """Add or merge a session row (earliest start, latest end, first non-null of the rest)."""
        old = self.sessions.get(row["session_id"])
        self.sessions[row["session_id"]] = row if old is None else merge_session(old, row)

    def seen_session(self, session_id: str, ts: datetime | None) -> dict[str, Any] | None:
        """Widen a known session's time span to ``ts`` and return its row (None if not yet known).

        The hot path: most lines belong to a session already seen, and building
        a full row per line to merge it would dominate parse time.
        """
        row = self.sessions.get(session_id)
        if row is not None and ts is not None:
            started, ended = row["started_at_utc"], row["ended_at_utc"]
            if started is None or ts < started:
                row["started_at_utc"] = ts
            if ended is None or ts > ended:
                row["ended_at_utc"] = ts
        return row

    def add_llm_call(self, row: dict[str, Any]) -> None:
        """Add or merge a model-request row, keeping the line with the most tokens."""
        old = self.llm_calls.get(row["call_key"])
        self.llm_calls[row["call_key"]] = row if old is None else merge_llm_call(old, row)

    def add_tool_call(self, row: dict[str, Any]) -> None:
        """Add or merge a tool-call row (a call and its result may come from different lines)."""
        old = self.tool_calls.get(row["tool_call_id"])
        self.tool_calls[row["tool_call_id"]] = row if old is None else merge_tool_call(old, row)

    def add_event(self, row: dict[str, Any]) -> None:
        self.events[(row["line_no"], row["kind"])] = row

    def add_tool_def(self, row: dict[str, Any]) -> None:
        """Add or merge a tool definition seen in a tool listing (widening its first/last seen)."""
        key = tool_def_key(row)
        old = self.tool_defs.get(key)
        self.tool_defs[key] = row if old is None else merge_tool_def(old, row)


class FormatModule(Protocol):
    """What a format module in ``tokaudit.ingest`` provides (see the registry)."""

    FORMAT: str
    AGENT: str

    def sniff(self, head: list[Any]) -> bool: ...

    def sniff_prefix(self, first: bytes) -> bool: ...

    # Optional: ``oversize_skip_rule(first_bytes) -> str | None`` names the skip rule for a line over
    # the size limit that the parser would skip anyway; ``sidecar_path(path) -> str | None`` names a
    # small metadata file whose JSON the runner hands to ``parse`` as ``state["sidecar"]``.

    def parse(self, lines: Iterable[Line], *, path: str, state: dict[str, Any] | None) -> ParseResult: ...

    def default_roots(self) -> list[Any]: ...


# --- merging rows that describe the same thing -------------------------------------------------

BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark some editors write at a file's start: not part of its first line

TOKEN_COLUMNS = ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens")


def total_tokens(row: dict[str, Any]) -> int:
    return sum(row[c] for c in TOKEN_COLUMNS)


def merge_llm_call(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Keep-max: the line with the most tokens carries the final usage (earlier ones are placeholders).

    Ties prefer the row that reports ``speed``, then the earlier line, matching
    the ``llm_calls_dedup`` view's order.
    """
    old_key = (total_tokens(old), old.get("speed") is not None, -old["line_no"])
    new_key = (total_tokens(new), new.get("speed") is not None, -new["line_no"])
    return new if new_key > old_key else old


def merge_tool_call(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Fill each column from whichever half has it; derive duration from timestamps when both exist and
    no part reported one."""
    merged = dict(old)
    for key, value in new.items():
        if value is not None and merged.get(key) is None:
            merged[key] = value
    if new.get("duration_method") == "reported" and merged.get("duration_method") == "timestamps":
        # A duration the tool or agent measured beats one read off two log lines' timestamps.
        merged["duration_ms"], merged["duration_method"] = new["duration_ms"], "reported"
    if merged.get("duration_ms") is None and merged.get("ts_utc") and merged.get("result_ts_utc"):
        # No duration reported by the tool: the time between the request line and the result line.
        delta = merged["result_ts_utc"] - merged["ts_utc"]
        merged["duration_ms"] = max(0, round(delta.total_seconds() * 1000))
        merged["duration_method"] = "timestamps"
    return merged


TOOL_DEF_KEY = ("session_id", "mcp_server", "tool_name", "schema_sha256")


def tool_def_key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    """A tool definition's identity: one server's tool with one exact schema, within a session."""
    return (row["session_id"], row["mcp_server"], row["tool_name"], row["schema_sha256"])


def merge_tool_def(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The same definition seen again: widen the span it was seen over."""
    merged = {k: (old.get(k) if old.get(k) is not None else new.get(k)) for k in old.keys() | new.keys()}
    firsts = [t for t in (old.get("first_seen_utc"), new.get("first_seen_utc")) if t is not None]
    lasts = [t for t in (old.get("last_seen_utc"), new.get("last_seen_utc")) if t is not None]
    merged["first_seen_utc"] = min(firsts) if firsts else None
    merged["last_seen_utc"] = max(lasts) if lasts else None
    return merged


# Agents a format names sessions by until a line names the agent itself (an OTel trace's agent span
# ends, and is exported, after the spans of its requests).
GENERIC_AGENTS = frozenset({"otel"})


def merge_session(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    merged = {k: (old.get(k) if old.get(k) is not None else new.get(k)) for k in old.keys() | new.keys()}
    if old.get("agent") in GENERIC_AGENTS and new.get("agent") is not None:
        merged["agent"] = new["agent"]
    starts = [t for t in (old.get("started_at_utc"), new.get("started_at_utc")) if t is not None]
    ends = [t for t in (old.get("ended_at_utc"), new.get("ended_at_utc")) if t is not None]
    merged["started_at_utc"] = min(starts) if starts else None
    merged["ended_at_utc"] = max(ends) if ends else None
    # Later lines describe the session's latest state (branch switched, agent upgraded).
    for key in ("git_branch", "agent_version"):
        if new.get(key) is not None:
            merged[key] = new[key]
    return merged


# --- small shared helpers -------------------------------------------------------------------------


def utc_now() -> datetime:
    """Now, as naive UTC (the ``*_utc`` columns)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def utc_naive(ts: datetime | None) -> datetime | None:
    """Store timestamps as naive UTC (the ``*_utc`` columns).

    A time that has no UTC equivalent in Python's range (year 1 with a positive
    offset, year 9999 with a negative one) is unusable and becomes None rather
    than failing the line.

    Examples:
        >>> from datetime import timedelta
        >>> utc_naive(datetime(2026, 3, 1, 12, tzinfo=timezone(timedelta(hours=2))))
        datetime.datetime(2026, 3, 1, 10, 0)
        >>> utc_naive(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1)))) is None
        True
    """
    if ts is None:
        return None
    if ts.tzinfo is timezone.utc:
        return ts.replace(tzinfo=None)
    if ts.tzinfo is not None:
        try:
            ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:
            return None
    return ts


def check_utf8(data: bytes) -> None:
    """Raise UnicodeDecodeError unless ``data`` is valid UTF-8.

    JSON decoders only validate the fields they decode; a log line with bad
    bytes anywhere is still a defective line and must be reported as one.
    """
    if not data.isascii():
        data.decode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_mcp_name(tool_name: str) -> tuple[str | None, str | None]:
    """``mcp__server__tool`` -> ``(server, tool)``; other names -> ``(None, None)``.

    The server part may itself contain ``:`` (plugin servers); the first ``__``
    after the prefix separates server from tool.

    Examples:
        >>> split_mcp_name("mcp__plugin:docs__fetch_page")
        ('plugin:docs', 'fetch_page')
        >>> split_mcp_name("Bash")
        (None, None)
    """
    if not tool_name.startswith("mcp__"):
        return None, None
    server, sep, tool = tool_name[5:].partition("__")
    if not sep or not server or not tool:
        return None, None
    return server, tool



# --- traces of tool results for the detectors -----------------------------------------------------

RESULT_HEAD_CHARS = 300
RESULT_TAIL_CHARS = 120
SIG_BINS = 8
SIG_HEAD_BYTES = 512
# Values (words with a digit) are read further in: a listing's ids do not repeat, however much of it is read,
# while a vocabulary does (a larger sample of words makes any two pages of prose look alike).
SIG_VALUE_HEAD_BYTES = 2048
SIG_TAIL_BYTES = 128
# A long result's body, the KiB after the values' head, is read for values too: a page whose first bytes are a
# fixed envelope (a schema with column descriptions, query metadata) would otherwise be that envelope, the same
# on every page of a listing. Only its values, where it is a run of records: more plain words would make any two
# pages of prose alike. At a fixed offset, not the middle: a log returned whole and growing keeps its lines there.
SIG_BODY_MIN_BYTES = 4096
SIG_BODY_BYTES = 1024
MIN_BODY_VALUES = 8  # distinct values in the body sample that make it a run of records (with MIN_VALUE_SHARE)
EMPTY_BIN = 0xFFFFFFFF  # a MinHash bin no word fell into
# A listing's records by their ids, over the whole page (its first ID_SCAN_BYTES): the words above sample a page's
# ends, and a window of records shifted by a few rows has new ends while it re-serves most of its rows. Ids are
# the values of ``MIN_ID_CHARS`` characters or more (record keys, cursors, hashes, long numbers); the shorter ones
# (a day, an hour, a count) are in every page of any listing.
ID_SCAN_BYTES = 64 * 1024
MIN_ID_CHARS = 8
MIN_ID_WORDS = 8  # distinct ids that make a listing's record bins (fewer: the page has none)
MIN_HEAD_IDS = 2  # ids in a result's first 2 KiB that make it worth scanning for the rest
# Words for the MinHash: runs of letters (folded to lower case), digits, underscores and non-ASCII bytes
# (other scripts); everything else separates words — JSON punctuation, quotes, slashes, escapes — so a
# compact JSON page is its keys and values, not one long "word". Words with a digit (*values*: numbers,
# ids, hashes, cursors, dates) are left out when there are few of them: in a notice or a status line they
# are positions — "segment 3 of 20", a cursor, a timestamp — not content. A page holding at least
# ``MIN_VALUE_WORDS`` distinct values is a listing of records, whose values are its content (instance
# ids, object keys, rows: two pages of one listing share every key name and differ in nothing else), so
# they stay — when values are also ``MIN_VALUE_SHARE`` of the words: templated lines each stamped with a
# line number or a time are mostly words, and a page of them is the same page under new stamps.
_WORD_BYTES = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128) else 32 for c in range(256)
)
# Eight: a short listing counts too (three free slots, each an id and a start time; one patient's evaluation), while a
# notice's step, total and wait are three or four.
MIN_VALUE_WORDS = 8
MIN_VALUE_SHARE = 0.3  # of the sample's words: a page of records is mostly values
# The token a tail excerpt starts inside of: dropped, since a key cut there has lost the prefix
# ("sk-ant-…") that redaction recognises it by.
_PARTIAL_TOKEN = re.compile(r"^[A-Za-z0-9_+/=.-]+")
# A pagination pointer between the head and the tail ("next_page_token": "…", "cursor=…"): kept in the
# excerpt, since a server can hide the cursor it steers with mid-page, away from both ends. The key words
# are found with plain substring searches first (fast on any text); only a bounded number of hits is
# then read as ``key: value``.
# Keys naming where the *next* page starts are searched first: a page of records can give each record a cursor
# of its own ("edges": [{"cursor": …}, …]) ahead of the page's own ("pageInfo": {"endCursor": …}).
_POINTER_WORDS = (b"next", b"endcursor", b"end_cursor", b"resume", b"continuation", b"_after", b"marker", b"cursor", b"token")
_POINTER_KEY = re.compile(r"(?:next|resume|continuation)[a-z_]*|[a-z_]*(?:cursor|page_?token|_after|marker)")
_POINTER_AT = re.compile(rb'([A-Za-z_]{1,48})"?\s*[:=]\s*"?([A-Za-z0-9_+/=.:-]{4,128})')
POINTER_SCAN_BYTES = 32 * 1024
MAX_POINTER_HITS = 32
MAX_POINTERS = 2
# Work a server says is left, as a list or an object ("outstanding": [{"part": "body.3", "tool": "get_notes"}],
# "pending": ["scope/api-7"]): the references the agent is steered to ask for next, hidden mid-answer like a
# cursor. The first few token-like strings after such a key are kept (a plain word is no reference).
_PENDING_WORDS = (b"outstanding", b"pending", b"remaining", b"queued", b"todo", b"unresolved", b"unverified", b"next")
_PENDING_KEY = re.compile(
    r"[a-z_]*(?:outstanding|pending|remaining|queued|todo|unresolved|unverified)[a-z_]*|next[a-z_]*"
)
_PENDING_AT = re.compile(rb'([A-Za-z_]{1,48})"?\s*:\s*[\[{]')
_QUOTED = re.compile(rb'"([A-Za-z0-9_+/=.:#-]{3,64})"(?!\s*:)')
PENDING_SCAN_BYTES = 256
MAX_PENDING_VALUES = 3


def _keys_at(window: bytes, low: bytes, words: tuple[bytes, ...], at_key: re.Pattern[bytes], key: re.Pattern[str]) -> Iterator[re.Match[bytes]]:
    """``at_key`` matched where a key holding one of ``words`` starts in ``window`` (``low``: it in lower case),
    for each key that ``key`` (lower case) accepts; at most ``MAX_POINTER_HITS`` places are read."""
    hits = 0
    for word in words:
        at = low.find(word)
        while at >= 0 and hits < MAX_POINTER_HITS:
            hits += 1
            start = at
            while start > 0 and at - start < 48 and (low[start - 1] == 95 or 97 <= low[start - 1] <= 122):  # _ or a-z
                start -= 1
            m = at_key.match(window, start)
            if m is not None and key.fullmatch(m.group(1).decode("ascii").lower()):
                yield m
            at = low.find(word, at + len(word))


def _pending_refs(window: bytes, low: bytes) -> str:
    """The first pending-work list (`` … key: ref ref ref``) in ``window`` (``low``: it in lower case), or ""."""
    for m in _keys_at(window, low, _PENDING_WORDS, _PENDING_AT, _PENDING_KEY):
        # An id, a path, a numbered part: not a state word ("unverified").
        values = [v.decode("ascii") for v in _QUOTED.findall(window, m.end(), m.end() + PENDING_SCAN_BYTES) if not v.isalpha()]
        if values:
            return f" … {m.group(1).decode('ascii')}: {' '.join(values[:MAX_PENDING_VALUES])}"
    return ""


def _middle_pointers(middle: bytes) -> str:
    """The pagination pointers (`` … key: value``) found in ``middle``'s first ``POINTER_SCAN_BYTES``, and the
    first list of pending work there (``_pending_refs``)."""
    window = middle[:POINTER_SCAN_BYTES]
    low = window.lower()
    found: list[str] = []
    for m in _keys_at(window, low, _POINTER_WORDS, _POINTER_AT, _POINTER_KEY):
        pointer = f"{m.group(1).decode('ascii')}: {m.group(2).decode('ascii')}"
        if pointer not in found:
            found.append(pointer)
            if len(found) == MAX_POINTERS:
                break
    return "".join(f" … {p}" for p in found) + _pending_refs(window, low)


# Results this large get a compressibility measure (smaller ones are too short to tell boilerplate from
# records: a few lines of anything shrink little). It is taken over their first bytes (zlib's window is
# 32 KiB: a sponge repeats well within it), so a huge result costs no more to measure than this.
COMPRESS_MIN_BYTES = 2 * 1024
COMPRESS_SAMPLE_BYTES = 32 * 1024


# Separators though non-ASCII, blanked byte for byte (three spaces) so the sample's cuts stay where they were:
# - symbols: arrows, mathematical and technical signs (U+2190–U+23FF: "→", "≥", "⏳"), box drawing, block
#   elements, geometric shapes, dingbats, braille spinners and other symbols (U+2500–U+2BFF: "├──",
#   "███░░░", "■□", "✓", "★", "⠋") are layout, not words: a progress bar filling up is the same empty page
#   each time, and a file read's line numbers ("   12→import os") stand apart from the line's first word;
# - typographic punctuation (U+2000–U+206F: ’ “ ” — …) separates words as its ASCII twin does ("don’t" as
#   "don't");
# - the punctuation of Chinese and Japanese text (U+3000–U+303F: 、。「」; the fullwidth ，：；！？（）), and the
#   variation selectors that follow an emoji (U+FE00–U+FE0F).
# (Number forms, U+2150–U+218F, stay words: "Ⅳ" is a counter's value as "iv" is.)
_SEPARATORS = re.compile(
    rb"\xe2(?:\x86[\x90-\xbf]|[\x87-\x8f\x94-\xaf][\x80-\xbf]|\x80[\x80-\xbf]|\x81[\x80-\xaf])|\xe3\x80[\x80-\xbf]"
    rb"|\xef(?:\xbc[\x81-\x8f\x9a-\xa0\xbb-\xbf]|\xbd[\x80\x9b-\xa5]|\xb8[\x80-\x8f])"
)
# Emoji (U+1F300–U+1FAFF: "🔄", "📄", "🚀") are four bytes, blanked by four spaces.
_EMOJI = re.compile(rb"\xf0\x9f[\x8c-\xab][\x80-\xbf]")
# Scripts written without spaces between words (Chinese, Japanese kana, Thai): a sentence would be one
# "word", and one cut at the sample's edge would be dropped whole. Each run of their characters becomes
# its overlapping pairs of characters (the usual unit for comparing such text), so two pages of it share a
# word where they share a phrase.
_UNSPACED_RUN = re.compile(rb"(?:\xe3[\x81-\xbf][\x80-\xbf]|[\xe4-\xe9][\x80-\xbf]{2}|\xe0[\xb8\xb9][\x80-\xbf])+")
# Every byte but the lead bytes of those characters: what deleting it leaves says, in one C pass, whether a
# text can hold such a run at all (most non-ASCII results hold only arrows, dashes or accents, and the
# regular expression scanning them for nothing costs more than all else done to a result).
_NOT_UNSPACED_LEAD = bytes(b for b in range(256) if b != 0xE0 and not 0xE3 <= b <= 0xE9)


def _pairs(run: re.Match[bytes]) -> bytes:
    """A run of 3-byte characters as its overlapping pairs, spaced (a single character stays itself)."""
    chars = run.group()
    if len(chars) <= 3:
        return chars
    return b" " + b" ".join(chars[i : i + 6] for i in range(0, len(chars) - 3, 3)) + b" "


def _words(chunk: bytes) -> bytes:
    """``chunk`` as ``_WORD_BYTES`` text: non-ASCII separators blanked, unspaced scripts in pairs of characters."""
    if not chunk.isascii():
        chunk = _SEPARATORS.sub(b"   ", chunk)
        if b"\xf0" in chunk:
            chunk = _EMOJI.sub(b"    ", chunk)
        if chunk.translate(None, _NOT_UNSPACED_LEAD):
            chunk = _UNSPACED_RUN.sub(_pairs, chunk)
    return chunk.translate(_WORD_BYTES)


def _sample_words(data: bytes, head_bytes: int) -> bytes:
    """The words of ``data``'s first ``head_bytes`` and last ``SIG_TAIL_BYTES`` (all of a short result), as
    ``_WORD_BYTES`` text, without the pieces of words cut there: "…baf" left of a cut id would be a new
    word on every page."""
    if len(data) <= head_bytes + SIG_TAIL_BYTES:
        return _words(data)
    head, tail = _words(data[:head_bytes]), _words(data[-SIG_TAIL_BYTES:])
    if head[-1] != 32 and _WORD_BYTES[data[head_bytes]] != 32:
        head = head[: max(head.rfind(b" "), 0)]
    if tail[0] != 32 and _WORD_BYTES[data[-SIG_TAIL_BYTES - 1]] != 32:
        cut = tail.find(b" ")
        tail = tail[cut:] if cut >= 0 else b""
    return head + b" " + tail


_DIGITS = b"0123456789"


def _values(words: list[bytes]) -> list[bytes]:
    """The words with a digit. (A regular expression searching for one rescans each word from every byte
    of it: quadratic in a word's length, and a sentence of Chinese or Japanese is one long word here.)
    Most words are plain letters, which ``isalpha`` (in C) rules out before the digits are counted."""
    return [w for w in words if not w.isalpha() and len(w.translate(None, _DIGITS)) != len(w)]


def _sig_words(data: bytes) -> set[bytes]:
    """The words of ``data`` its MinHash is taken over (``_sig_words_and_ids``)."""
    return _sig_words_and_ids(data)[0]


def _sig_words_and_ids(data: bytes) -> tuple[set[bytes], bool]:
    """The words without a digit of ``data``'s first ``SIG_HEAD_BYTES`` and last ``SIG_TAIL_BYTES``, and its
    values (words with a digit) of its first ``SIG_VALUE_HEAD_BYTES`` and last ``SIG_TAIL_BYTES`` when there
    are ``MIN_VALUE_WORDS`` of them and they make ``MIN_VALUE_SHARE`` of its words (a listing of records);
    and whether its first ``SIG_VALUE_HEAD_BYTES`` hold ``MIN_HEAD_IDS`` ids (values of ``MIN_ID_CHARS`` characters
    or more: where a page may list records by their keys; a file's line numbers and a log's times are shorter)."""
    text = _sample_words(data, SIG_HEAD_BYTES)
    tokens = text.split()
    found = _values(tokens)
    words = set(tokens).difference(found)
    if len(data) > SIG_HEAD_BYTES + SIG_TAIL_BYTES:
        tokens = _sample_words(data, SIG_VALUE_HEAD_BYTES).split()
        found = _values(tokens)
    values = set(found)
    # Records are mostly values; templated lines numbered or stamped one by one are mostly words.
    has_ids = sum(len(v) >= MIN_ID_CHARS for v in values) >= MIN_HEAD_IDS
    if len(values) >= MIN_VALUE_WORDS and len(found) >= MIN_VALUE_SHARE * len(tokens):
        words |= values
    if len(data) >= SIG_BODY_MIN_BYTES:
        words |= _body_values(data)
    return words, has_ids


def _min_bins(words: Iterable[bytes]) -> list[int]:
    """The one-permutation MinHash of ``words``: ``SIG_BINS`` bins of their CRC-32s, each keeping its smallest."""
    mins = [EMPTY_BIN] * SIG_BINS
    missing = SIG_BINS
    # Hashes in ascending order: the first one met in a bin is that bin's minimum, so the loop
    # usually stops after a few dozen of them (the hashing and sorting run in C).
    for h in sorted(map(zlib.crc32, words)):
        b = h & (SIG_BINS - 1)
        if mins[b] == EMPTY_BIN:
            mins[b] = h
            missing -= 1
            if not missing:
                break
    return mins


def _record_ids(data: bytes) -> set[bytes]:
    """The ids (values of ``MIN_ID_CHARS`` characters or more) of ``data``'s first ``ID_SCAN_BYTES``, when there are
    ``MIN_ID_WORDS`` distinct ones; else none."""
    tokens = _words(data[:ID_SCAN_BYTES]).split()
    if len(data) > ID_SCAN_BYTES:
        tokens.pop()  # maybe a piece of a word cut at the end of the scan
    ids = set(_values([w for w in tokens if len(w) >= MIN_ID_CHARS]))
    return ids if len(ids) >= MIN_ID_WORDS else set()


def _body_values(data: bytes) -> set[bytes]:
    """The values (words with a digit) of the ``SIG_BODY_BYTES`` after ``data``'s first ``SIG_VALUE_HEAD_BYTES``
    when they are ``MIN_BODY_VALUES`` distinct and ``MIN_VALUE_SHARE`` of its words (a run of records); else none."""
    start = SIG_VALUE_HEAD_BYTES
    # The first and last words may be pieces of words cut at the sample's edges.
    tokens = _words(data[start : start + SIG_BODY_BYTES]).split()[1:-1]
    found = _values(tokens)
    values = set(found)
    return values if len(values) >= MIN_BODY_VALUES and len(found) >= MIN_VALUE_SHARE * len(tokens) else set()


def answer_text(content: list[Any]) -> bytes:
    """The text of an MCP ``CallToolResult``'s ``content`` blocks (its ``text`` blocks, one per line); b"" when it has
    none (an image, a resource alone)."""
    texts = [block["text"] for block in content if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]
    # (A lone surrogate a JSON escape can spell is no UTF-8: replaced, as a line's invalid bytes would be.)
    return "\n".join(texts).encode(errors="replace")


_ANY_JSON = msgspec.json.Decoder()


def mcp_answer_text(data: bytes) -> bytes | None:
    """The text blocks of an MCP ``CallToolResult`` written as JSON (``{"content": [...], "isError": …}``), which some
    agents log as a tool's output, its quotes escaped and lines joined inside; None when ``data`` is no such JSON or
    holds no text block. A result's features are read from this text: what the server said, not the wrapper."""
    if not data.lstrip().startswith(b"{"):
        return None
    try:
        value = _ANY_JSON.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("content"), list):
        return None
    return answer_text(value["content"]) or None


def result_features(data: bytes) -> dict[str, Any]:
    """Bounded traces of a tool result that detectors compare without keeping the text.

    ``result_excerpt``: its first and last characters (continuation notices and
    cursors sit at either end) and up to two pagination pointers found between them
    (``next_page_token: …``: a cursor hidden mid-page), with secrets redacted — what
    findings quote and the steering rule looks for copied values in.

    ``result_sig``: a one-permutation MinHash of its words (runs of letters and
    digits, lowercased; ``{"name":"api"}`` is two words; words with a digit are
    left out unless the page is mostly made of them (``MIN_VALUE_WORDS`` distinct,
    ``MIN_VALUE_SHARE`` of its words), so "segment 3 of 20" and
    "segment 4 of 20" are the same words, and so are notices that differ only in
    a cursor, while two pages of records differ by their ids) over its first 512 and last 128
    bytes, and the values of the KiB after its first 2 KiB, in a result of 4 KiB or more, where
    that KiB is a run of records (a page behind a long fixed envelope differs by its records):
    word hashes (CRC-32) fall into 8 bins by their low bits and each bin
    keeps its smallest. The share of equal bins among those filled in either of
    two results estimates the Jaccard similarity of their word sets — result
    novelty, compared column by column at audit time. An empty bin holds
    ``0xFFFFFFFF``. A result with two ids (values of 8 characters or more) in its first
    2 KiB and ``MIN_ID_WORDS`` in its first 64 KiB gets
    ``SIG_BINS`` more bins, the MinHash of those ids (a listing's records, by their
    keys): a window of records that moved on by a few rows has new ends but the same records.

    ``result_compress_ratio``: for a result of ``COMPRESS_MIN_BYTES`` or more, how
    many times zlib (level 1) shrinks its first ``COMPRESS_SAMPLE_BYTES`` — how
    repetitive it is. Code, prose, real records and logs shrink 2–9×; a sponge
    of repeated lines, boilerplate or near-identical records 15× and more.
    Smaller results (about 500 tokens) get None.

    Examples:
        >>> a = result_features(b"Progress: segment 3/20 verified. Call again with segment_index=4")
        >>> b = result_features(b"Progress: segment 4/20 verified. Call again with segment_index=5")
        >>> a["result_sig"] == b["result_sig"], a["result_excerpt"][:18]
        (True, 'Progress: segment ')
        >>> page = lambda first: ",".join(f'{{"id":"i-{n:08x}","size":{n * 37},"ip":"10.0.{n}.7"}}' for n in range(first, first + 30)).encode()
        >>> result_features(page(0))["result_sig"] == result_features(page(20))["result_sig"]  # new records: new values
        False
        >>> a, b = result_features(page(0))["result_sig"], result_features(page(3))["result_sig"]  # 27 of 30 rows again
        >>> len(a), sum(x == y for x, y in zip(a[8:], b[8:])) >= 6
        (16, True)
        >>> len(result_features(b"a line of text " * 10_000)["result_excerpt"])  # 300 + " … " + the tail's whole words
        422
        >>> result_features(b"heartbeat ok\\n" * 5_000)["result_compress_ratio"] > 15, result_features(b"short")["result_compress_ratio"]
        (True, None)
    """
    words, has_ids = _sig_words_and_ids(data)
    mins = _min_bins(words)
    if has_ids:
        ids = _record_ids(data)
        if ids:
            mins += _min_bins(ids)
    compress_ratio = None
    if len(data) >= COMPRESS_MIN_BYTES:
        head_bytes = data[:COMPRESS_SAMPLE_BYTES]
        compress_ratio = round(len(head_bytes) / len(zlib.compress(head_bytes, 1)), 2)
    return {"result_excerpt": redact(_excerpt_text(data)), "result_sig": mins, "result_compress_ratio": compress_ratio}


def _excerpt_text(data: bytes) -> str:
    """A result's head, the pagination pointers between, and its tail (whole words), before redaction."""
    if len(data) > (RESULT_HEAD_CHARS + RESULT_TAIL_CHARS) * 2:
        head = data[: RESULT_HEAD_CHARS * 4].decode("utf-8", "replace")[:RESULT_HEAD_CHARS]
        tail = data[-RESULT_TAIL_CHARS * 4 :].decode("utf-8", "replace")[-RESULT_TAIL_CHARS:]
        middle = data[RESULT_HEAD_CHARS : len(data) - RESULT_TAIL_CHARS]
    else:
        text = data.decode("utf-8", "replace")
        if len(text) <= RESULT_HEAD_CHARS + RESULT_TAIL_CHARS:
            return text
        head, tail = text[:RESULT_HEAD_CHARS], text[-RESULT_TAIL_CHARS:]
        middle = text[RESULT_HEAD_CHARS:-RESULT_TAIL_CHARS].encode("utf-8", "replace")
    return head + _middle_pointers(middle) + " … " + _PARTIAL_TOKEN.sub("", tail, count=1)
