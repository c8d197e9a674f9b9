"""tokaudit's own event format ("generic", version 1): what any agent can write so tokaudit reads it.

Spec for producers: ``docs/generic-format.md``; JSON Schema:
``tokaudit/schemas/generic-v1.schema.json`` (printed by ``tokaudit schema``).
There is no default folder: point ``tokaudit ingest`` at the files (``*.jsonl``).

Shape: JSON Lines, one event object per line, each with ``"tokaudit": 1`` (the
format version, and the marker sniffing looks for) and ``"type"``:

* ``session`` — agent, agent_version, project, cwd, git_branch,
  parent_session_id, subagent_type, task_label, outcome;
* ``llm_call`` — one billed model request, with the store's token columns;
* ``tool_call`` — a tool call (and optionally its result);
* ``tool_result`` — a result written later, joined to its call by tool_call_id;
* ``event`` — a session event (``kind``: compaction, api_error, ...).

Every event has ``ts`` (ISO 8601 with a zone) and ``session_id``. Field names
are the store's columns, so the mapping is mostly 1:1. The exceptions:

* ``input_tokens`` is uncached input, as stored, unless the event says
  ``input_includes_cache: true`` (OpenAI/OTel-style totals, the reference's
  universal trap #1); then ``input_tokens ← input_tokens − cache_read_tokens −
  cache writes``.
* ``cache_write_tokens`` (TTL unknown) is stored as ``cache_write_5m_tokens``
  with ``cache_ttl_known = false``.
* Ids are namespaced: ``session_id ← "generic:" + session_id``; ``call_key ←
  session_id + ":" + call_key``; ``tool_call_id ← session_id + ":" +
  tool_call_id`` (the producer's id is kept in ``protocol_call_id``), so ids
  need only be unique within their session.
* ``args`` / ``result`` texts are measured (UTF-8 bytes, SHA-256, o200k token
  count labelled ``tokenizer:o200k_base``), not stored: the arguments keep a
  masked skeleton, a result its redacted head and tail (``result_excerpt``).
  ``args_tokens`` / ``result_tokens`` given by the producer are ``reported``.

Dedup key: ``call_key`` as above. Re-writing a call with the same key keeps the
record with the most tokens (streaming placeholders, re-emitted lines), in the
file and across files. A tool call written twice, or a call and its result,
merge by filling columns still NULL. A session's first event fixes its
``agent`` (``generic`` unless that event is a ``session`` event naming one);
later session events fill what is still unknown. Parsing is stateless: every
line stands alone, so a grown file resumes at any line.

Versions: within version 1 unknown fields are ignored and unknown event types
are skipped, so producers may write later 1.x additions. A line with another
version is a problem (``unsupported-version``), never guessed at.

Validation is strict: each problem names the event type and field.
Problem kinds: ``invalid-utf8``, ``invalid-json``, ``wrong-type`` (a field of
the wrong JSON type, incl. ``12.0`` for an integer), ``missing-field``,
``invalid-value`` (out of range, too long, not in the enum, a bad timestamp),
``unsupported-version``, ``conflicting-fields`` (``args`` with
``args_bytes``, ``result`` with ``result_bytes``, ``cache_write_tokens`` with a
TTL-specific write), ``inconsistent-usage`` (``reasoning_tokens >
output_tokens``; an inclusive ``input_tokens`` smaller than its cache parts).

Skip rules: ``blank-line``; ``type:<name>`` for an event type this version does
not know (``type:(other)`` when the name is not lower_snake_case, longer than 32
characters, or one too many: at most 32 rule names per parse).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from importlib import resources
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest.base import Line, ParseResult, check_utf8, result_features, sha256_hex, split_mcp_name, utc_naive
from tokaudit.ingest.skeleton import args_skeleton, args_values
from tokaudit.ingest.tokens import count_tokens
from tokaudit.redact import redact

FORMAT = "generic"
AGENT = "generic"  # when a session's first event does not name its agent
FILE_PATTERNS = ("*.jsonl",)
VERSION = 1
SCHEMA_FILES = {"generic": "generic-v1.schema.json"}  # under tokaudit/schemas/

# Bounds shared with the JSON Schema (keep the two in step; a test checks they agree on examples).
MAX_TOKENS = 10**15  # no request is billed a quadrillion tokens; keeps sums inside int64
MAX_COST_USD = 1e9
MAX_SKIP_RULES = 32  # distinct skip-rule names per parse; more unknown types count as "type:(other)"
TS_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"

Tokens = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
Id = Annotated[str, Meta(min_length=1, max_length=512)]
Name = Annotated[str, Meta(min_length=1, max_length=256)]
Text = Annotated[str, Meta(max_length=4096)]
Timestamp = Annotated[str, Meta(pattern=TS_PATTERN)]
ContentType = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
UsageSource = Annotated[str, Meta(pattern=r"^(reported|estimated:[A-Za-z0-9_.:/+-]{1,64})$")]
Cost = Annotated[float, Meta(ge=0, le=MAX_COST_USD)]
EventKind = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class Envelope(Struct):
    tokaudit: int
    type: Any = None  # checked after the version: another version may shape lines differently


class Common(Struct, kw_only=True):
    ts: Timestamp
    session_id: Id


class SessionEvent(Common, kw_only=True):
    agent: Name | None = None
    agent_version: Name | None = None
    project: Text | None = None
    cwd: Text | None = None
    git_branch: Name | None = None
    parent_session_id: Id | None = None
    subagent_type: Name | None = None
    task_label: Text | None = None
    outcome: Literal["success", "error", "capped", "unknown"] | None = None


class LlmCallEvent(Common, kw_only=True):
    call_key: Id
    model: Name
    input_tokens: Tokens
    output_tokens: Tokens
    provider: Name | None = None
    input_includes_cache: bool | None = None
    cache_read_tokens: Tokens | None = None
    cache_write_5m_tokens: Tokens | None = None
    cache_write_1h_tokens: Tokens | None = None
    cache_write_tokens: Tokens | None = None
    reasoning_tokens: Tokens | None = None
    web_search_requests: Tokens | None = None
    context_window_tokens: Tokens | None = None
    message_id: Id | None = None
    request_id: Id | None = None
    stop_reason: Name | None = None
    service_tier: Name | None = None
    usage_source: UsageSource | None = None
    output_is_lower_bound: bool | None = None
    is_sidechain: bool | None = None
    reported_cost_usd: Cost | None = None


class ResultFields(Common, kw_only=True):
    result: str | None = None
    result_bytes: Tokens | None = None
    result_tokens: Tokens | None = None
    result_content_types: Annotated[list[ContentType], Meta(max_length=16)] | None = None
    result_truncated: bool | None = None
    is_error: bool | None = None
    duration_ms: Tokens | None = None


class ToolCallEvent(ResultFields, kw_only=True):  # kw_only: its required fields follow optional ones
    tool_call_id: Id
    tool_name: Name
    call_key: Id | None = None
    tool_kind: Literal["function", "custom", "web_search", "mcp", "builtin"] | None = None
    mcp_server: Name | None = None
    mcp_tool: Name | None = None
    args: Raw = Raw(b"null")
    args_bytes: Tokens | None = None
    args_tokens: Tokens | None = None


class ToolResultEvent(ResultFields, kw_only=True):
    tool_call_id: Id


class SessionEventLine(Common, kw_only=True):
    kind: EventKind
    detail: Annotated[str, Meta(max_length=4096)] | None = None


_envelope = msgspec.json.Decoder(Envelope)
_string = msgspec.json.Decoder(str)
_TS = re.compile(TS_PATTERN)
_RULE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_AT = re.compile(r" - at `\$\.?(?P<path>[^`]*)`$")
_COST_QUANTUM = Decimal(1).scaleb(-18)  # the store keeps 18 decimal places

Outcome = tuple[str, str] | None  # (problem kind, message), ("skip", rule name), or None when the line was used


def default_roots() -> list[Any]:
    """No agent writes this format to a known place: files are named on the command line."""
    return []


def sniff(head: list[Any]) -> bool:
    """True when the file's first JSON value carries the format marker ``"tokaudit": <int>``.

    Any version is claimed, so a newer file is reported as such instead of as an unknown format.
    """
    first = head[0] if head else None
    return isinstance(first, dict) and type(first.get("tokaudit")) is int


_PREFIX = re.compile(rb'^\{\s*"tokaudit"\s*:\s*-?[0-9]+\s*[,}]')


def sniff_prefix(first: bytes) -> bool:
    """True when an over-long first line starts with the marker (producers write it as the first key)."""
    return bool(_PREFIX.match(first))


def schema_text(fmt: str = FORMAT) -> str:
    """The JSON Schema (draft 2020-12) of a tokaudit event format, as shipped in the package.

    Examples:
        >>> import json
        >>> json.loads(schema_text())["properties"]["tokaudit"]["const"]
        1
    """
    return resources.files("tokaudit").joinpath("schemas", SCHEMA_FILES[fmt]).read_text(encoding="utf-8")


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse generic event lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    for line in lines:
        if not line.data.strip():
            result.skipped["blank-line"] += 1
            continue
        try:
            check_utf8(line.data)
            env = _envelope.decode(line.data)
        except msgspec.ValidationError as exc:
            result.problem(line, *_validation_problem("line", exc))
            continue
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        outcome = _use_line(result, line, env)
        if outcome is None:
            result.lines_ok += 1
        elif outcome[0] == "skip":
            result.skipped[outcome[1]] += 1
        else:
            result.problem(line, *outcome)
    return result


def _use_line(result: ParseResult, line: Line, env: Envelope) -> Outcome:
    if env.tokaudit != VERSION:
        if env.tokaudit > VERSION:
            return "unsupported-version", f"format version {env.tokaudit} is newer than this tokaudit reads ({VERSION}): upgrade tokaudit"
        return "unsupported-version", f"format version {env.tokaudit} does not exist (this tokaudit reads version {VERSION})"
    if env.type is None:
        return "missing-field", "line: missing required field `type`"
    if not isinstance(env.type, str):
        return "wrong-type", f"line: field `type`: expected `str`, got `{_json_type(env.type)}`"
    handler = _HANDLERS.get(env.type)
    if handler is None:
        # A type from a later 1.x version: skipped by name, so a reader sees what it missed.
        rule = f"type:{env.type}"
        if not _RULE_NAME.match(env.type) or (rule not in result.skipped and len(result.skipped) >= MAX_SKIP_RULES):
            rule = "type:(other)"  # bounded: a hostile file cannot grow the rule table without limit
        return "skip", rule
    decoder, use = handler
    try:
        event = decoder.decode(line.data)
    except msgspec.ValidationError as exc:
        return _validation_problem(env.type, exc)
    except RecursionError:
        return "too-deep", "JSON nested too deeply to decode"
    try:
        ts = _parse_ts(event.ts)
    except (ValueError, OverflowError) as exc:  # February 30; an offset pushing year 1 or 9999 out of range
        return "invalid-value", f"{env.type} event: field `ts`: not a real date and time ({exc})"
    return use(result, line, event, ts)


def _validation_problem(where: str, exc: msgspec.ValidationError) -> tuple[str, str]:
    """A problem kind and a message naming the event type and the field, from msgspec's error."""
    text = str(exc)
    match = _AT.search(text)
    field_path = match["path"] if match else ""
    message = text[: match.start()] if match else text
    if "missing required field" in message:
        kind, message = "missing-field", message.replace("Object missing", "missing")
    elif message.startswith("Expected `") and ", got `" in message:
        kind = "wrong-type"
    else:
        kind = "invalid-value"
    message = message[:1].lower() + message[1:]
    prefix = where if where in ("line", "event") else f"{where} event"
    return kind, f"{prefix}: field `{field_path}`: {message}" if field_path else f"{prefix}: {message}"


def _json_type(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _parse_ts(text: str) -> datetime | None:
    """ISO 8601 with a zone (the decoder checked the shape), as naive UTC; ValueError for impossible dates."""
    ts = utc_naive(datetime.fromisoformat(text))
    if ts is None:  # a time with no UTC equivalent (year 1 at +01:00): as unusable as February 30
        raise ValueError("date value out of range")
    return ts


def _session_id(raw_id: str) -> str:
    return f"{FORMAT}:{raw_id}"


def _touch_session(result: ParseResult, session_id: str, ts: datetime | None) -> None:
    """Widen the session's span to ``ts``; a session first seen here gets the default agent."""
    if result.seen_session(session_id, ts) is None:
        result.add_session({"session_id": session_id, "agent": AGENT, "started_at_utc": ts, "ended_at_utc": ts})


def _session(result: ParseResult, line: Line, ev: SessionEvent, ts: datetime | None) -> Outcome:
    result.add_session(
        {
            "session_id": _session_id(ev.session_id),
            "agent": ev.agent or AGENT,
            "project": ev.project or ev.cwd,
            "cwd": ev.cwd,
            "git_branch": ev.git_branch,
            "parent_session_id": _session_id(ev.parent_session_id) if ev.parent_session_id else None,
            "agent_id": None,
            # A label is often the task's first words, and tasks quote tokens and URLs with passwords.
            "task_label": None if ev.task_label is None else redact(ev.task_label),
            "outcome": ev.outcome,
            "agent_version": ev.agent_version,
            "subagent_type": ev.subagent_type,
            "started_at_utc": ts,
            "ended_at_utc": ts,
        }
    )
    return None


def _llm_call(result: ParseResult, line: Line, ev: LlmCallEvent, ts: datetime | None) -> Outcome:
    if ev.cache_write_tokens is not None and (ev.cache_write_5m_tokens is not None or ev.cache_write_1h_tokens is not None):
        return "conflicting-fields", "llm_call event: give cache_write_tokens (TTL unknown) or cache_write_5m_tokens/cache_write_1h_tokens, not both"
    cache_read = ev.cache_read_tokens or 0
    if ev.cache_write_tokens is not None:
        write_5m, write_1h, ttl_known = ev.cache_write_tokens, 0, ev.cache_write_tokens == 0
    else:
        write_5m, write_1h, ttl_known = ev.cache_write_5m_tokens or 0, ev.cache_write_1h_tokens or 0, True
    uncached = ev.input_tokens
    if ev.input_includes_cache:
        cached = cache_read + write_5m + write_1h
        uncached -= cached
        if uncached < 0:
            return "inconsistent-usage", (
                f"llm_call event: input_tokens ({ev.input_tokens}) is smaller than cache_read_tokens + cache writes ({cached}) "
                "although input_includes_cache is true"
            )
    if ev.reasoning_tokens is not None and ev.reasoning_tokens > ev.output_tokens:
        return "inconsistent-usage", (
            f"llm_call event: reasoning_tokens ({ev.reasoning_tokens}) exceeds output_tokens ({ev.output_tokens}); output must include reasoning"
        )
    session_id = _session_id(ev.session_id)
    _touch_session(result, session_id, ts)
    result.add_llm_call(
        {
            "call_key": f"{session_id}:{ev.call_key}",
            "session_id": session_id,
            "line_no": line.line_no,
            "ts_utc": ts,
            "provider": ev.provider,
            "model": ev.model,
            "message_id": ev.message_id,
            "request_id": ev.request_id,
            "input_tokens": uncached,
            "cache_read_tokens": cache_read,
            "cache_write_5m_tokens": write_5m,
            "cache_write_1h_tokens": write_1h,
            "output_tokens": ev.output_tokens,
            "reasoning_tokens": ev.reasoning_tokens,
            "web_search_requests": ev.web_search_requests or 0,
            "context_window_tokens": ev.context_window_tokens,
            "usage_source": ev.usage_source or "reported",
            "output_is_lower_bound": bool(ev.output_is_lower_bound),
            "cache_ttl_known": ttl_known,
            "is_sidechain": bool(ev.is_sidechain),
            "is_aggregate": False,
            "stop_reason": ev.stop_reason,
            "service_tier": ev.service_tier,
            "speed": None,
            "aggregate_calls": None,
            # float -> shortest decimal that round-trips, fixed to the store's 18 places.
            "reported_cost_usd": None if ev.reported_cost_usd is None else Decimal(repr(ev.reported_cost_usd)).quantize(_COST_QUANTUM),
        }
    )
    return None


def _result_columns(ev: ResultFields) -> dict[str, Any]:
    """The result half of a tool-call row: sizes, hash, token count and a redacted excerpt of the text."""
    cols: dict[str, Any] = {
        "result_truncated": ev.result_truncated,
        "is_error": ev.is_error,
        "duration_ms": ev.duration_ms,
        "duration_method": "reported" if ev.duration_ms is not None else None,
        "result_bytes": ev.result_bytes,
        "result_sha256": None,
        "result_tokens": ev.result_tokens,
        "result_tokens_method": "reported" if ev.result_tokens is not None else None,
        "result_content_types": ",".join(sorted(set(ev.result_content_types))) if ev.result_content_types else None,
    }
    if ev.result is not None:
        data = ev.result.encode("utf-8")
        cols["result_bytes"] = len(data)
        cols["result_sha256"] = sha256_hex(data)
        cols.update(result_features(data))
        if ev.result_tokens is None:
            cols["result_tokens"], cols["result_tokens_method"] = count_tokens(ev.result)
        if cols["result_content_types"] is None:
            cols["result_content_types"] = "text"
    return cols


def _has_result(ev: ResultFields) -> bool:
    return any(
        v is not None
        for v in (ev.result, ev.result_bytes, ev.result_tokens, ev.result_content_types, ev.result_truncated, ev.is_error, ev.duration_ms)
    )


def _result_conflict(ev: ResultFields, etype: str) -> Outcome:
    if ev.result is not None and ev.result_bytes is not None:
        return "conflicting-fields", f"{etype} event: give result (the text) or result_bytes (its size), not both"
    return None


def _tool_call(result: ParseResult, line: Line, ev: ToolCallEvent, ts: datetime | None) -> Outcome:
    raw_args = bytes(ev.args)
    has_args = raw_args != b"null"
    if has_args and ev.args_bytes is not None:
        return "conflicting-fields", "tool_call event: give args (the arguments) or args_bytes (their size), not both"
    conflict = _result_conflict(ev, "tool_call")
    if conflict:
        return conflict
    session_id = _session_id(ev.session_id)
    _touch_session(result, session_id, ts)
    split_server, split_tool = split_mcp_name(ev.tool_name)
    server = ev.mcp_server or split_server
    row: dict[str, Any] = {
        "tool_call_id": f"{session_id}:{ev.tool_call_id}",
        "session_id": session_id,
        "call_key": f"{session_id}:{ev.call_key}" if ev.call_key else None,
        "line_no": line.line_no,
        "ts_utc": ts,
        "tool_name": ev.tool_name,
        "tool_kind": ev.tool_kind or ("mcp" if server else "function"),
        "mcp_server": server,
        "mcp_tool": ev.mcp_tool or split_tool or (ev.tool_name if server else None),
        "protocol_call_id": ev.tool_call_id,
        "args_bytes": ev.args_bytes,
        "args_tokens": ev.args_tokens,
        "args_tokens_method": "reported" if ev.args_tokens is not None else None,
    }
    if has_args:
        # A string is the text the model wrote (free-form tools); any other value is measured as written.
        text = _string.decode(raw_args) if raw_args.startswith(b'"') else raw_args.decode("utf-8")
        data = text.encode("utf-8")
        row["args_bytes"] = len(data)
        row["args_sha256"] = sha256_hex(data)
        row["args_skeleton"] = args_skeleton(text)
        row["args_values"] = args_values(text)
        if ev.args_tokens is None:
            row["args_tokens"], row["args_tokens_method"] = count_tokens(text)
    if _has_result(ev):
        row["result_line_no"] = line.line_no
        row.update(_result_columns(ev))
    result.add_tool_call(row)
    return None


def _tool_result(result: ParseResult, line: Line, ev: ToolResultEvent, ts: datetime | None) -> Outcome:
    conflict = _result_conflict(ev, "tool_result")
    if conflict:
        return conflict
    session_id = _session_id(ev.session_id)
    _touch_session(result, session_id, ts)
    row = {
        "tool_call_id": f"{session_id}:{ev.tool_call_id}",
        "session_id": session_id,
        "protocol_call_id": ev.tool_call_id,
        "result_line_no": line.line_no,
        "result_ts_utc": ts,
        **_result_columns(ev),
    }
    result.add_tool_call(row)
    return None


def _event(result: ParseResult, line: Line, ev: SessionEventLine, ts: datetime | None) -> Outcome:
    session_id = _session_id(ev.session_id)
    _touch_session(result, session_id, ts)
    result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": ev.kind,
                      "detail": None if ev.detail is None else redact(ev.detail)})
    return None


_HANDLERS: dict[str, tuple[msgspec.json.Decoder, Callable[[ParseResult, Line, Any, datetime | None], Outcome]]] = {
    "session": (msgspec.json.Decoder(SessionEvent), _session),
    "llm_call": (msgspec.json.Decoder(LlmCallEvent), _llm_call),
    "tool_call": (msgspec.json.Decoder(ToolCallEvent), _tool_call),
    "tool_result": (msgspec.json.Decoder(ToolResultEvent), _tool_result),
    "event": (msgspec.json.Decoder(SessionEventLine), _event),
}
