"""Claude Code session transcripts (``~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl``).

Locations: ``$CLAUDE_CONFIG_DIR`` (comma list; each entry holds ``projects/``)
or else ``~/.claude/projects`` and ``~/.config/claude/projects``. Subagents
live in ``<project>/<sessionId>/subagents/agent-<id>.jsonl``.

Shape: one JSON object per line with ``type`` = user | assistant | system |
summary | file-history-snapshot | queue-operation | progress | ... Assistant
lines carry ``message{id, model, content[], stop_reason, usage}`` and a
top-level ``requestId``.

Mapping (Anthropic usage is already canonical: ``input_tokens`` excludes cache):
``input_tokens ← usage.input_tokens``; ``cache_read_tokens ←
cache_read_input_tokens``; ``cache_write_5m/1h_tokens ←
cache_creation.ephemeral_5m/1h_input_tokens`` (when the split is missing, all
of ``cache_creation_input_tokens`` is booked as 5m and ``cache_ttl_known`` is
false; so is the rest when the split sums to less than the total); ``output_tokens ← output_tokens`` (thinking included);
``reasoning_tokens`` is NULL (not reported separately).

Dedup key: ``claude:<message.id>:<requestId>``. Claude Code writes one line per
content block, each repeating the same usage; the line with the most tokens
wins (earlier lines can hold a streaming placeholder for output_tokens,
ccusage#901). A line with a ``message.id`` and no ``requestId`` (versions that
wrote none) is keyed on the message id alone: its content blocks are still one
response (ccusage 20.0.24 counts each such line, so its totals are higher
there). A line without ``message.id`` cannot be deduplicated: it is kept
under a per-line key and flagged with a ``no_dedup_key`` event.

Quirks handled:

* placeholder ``output_tokens`` before Claude Code 2.1.97 (claude-code#22686):
  rows from older versions with ``stop_reason`` null get ``output_is_lower_bound``;
* ``"model":"<synthetic>"`` lines are local messages (API errors, usage-limit
  notices), not model calls: recorded as events, never billed;
* sidechain replays (``/btw``, ccusage#913) are dropped by the store's dedup view;
* subagent files become their own session with ``parent_session_id`` set to the
  session that spawned them, so totals roll up; so do subagents that older versions
  (1.x–2.0.x) wrote into the parent's transcript as a sidechain of their own
  (``_inline_subagent``);
* ``file-history-snapshot`` lines (can be hundreds of MB, ccusage#873) are
  skipped before parsing; other UI/state line types are skipped by rule
  ``type:<name>``;
* any JSON whitespace is accepted (ccusage only reads compact ``"usage":{``);
* steps of a request that its top-level usage leaves out though they are billed
  (``usage.iterations`` of type ``compaction`` or ``advisor_message``) become
  requests of their own, keyed ``<request key>#<position>:<type>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest.base import Line, ParseResult, check_utf8, result_features, sha256_hex, split_mcp_name, total_tokens, utc_naive
from tokaudit.ingest.skeleton import args_skeleton, args_values

FORMAT = "claude-code"
AGENT = "claude-code"
FILE_PATTERNS = ("*.jsonl",)  # names picked up when walking a folder
# Subagent metadata read beside its transcript (see sidecar_path), never a log of its own.
SIDECAR_PATTERNS = ("agent-*.meta.json",)

# No real count comes near 10^15; a larger one is a corrupt line (and would not fit the store's BIGINT).
Tokens = Annotated[int, Meta(ge=0, le=10**15)]

# Line types that carry what tokaudit stores; every other type is skipped by rule.
USED_TYPES = frozenset({"assistant", "user", "system", "summary"})
# Snapshot lines (up to hundreds of MB, ccusage#873) are recognised by their first key and never
# decoded. A line with the type elsewhere is decoded and skipped by the same rule, only slower.
_SNAPSHOT_START = re.compile(rb'^\{\s*"type"\s*:\s*"file-history-snapshot"')
PLACEHOLDER_FIXED_IN = (2, 1, 97)


class CacheCreation(Struct):
    ephemeral_5m_input_tokens: Tokens | None = None
    ephemeral_1h_input_tokens: Tokens | None = None


class ServerToolUse(Struct):
    web_search_requests: Tokens | None = None
    web_fetch_requests: Tokens | None = None


class TokenCounts(Struct):
    """The token fields Anthropic reports for a request, and for each of its steps."""

    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    cache_creation_input_tokens: Tokens | None = None
    cache_read_input_tokens: Tokens | None = None
    cache_creation: CacheCreation | None = None


class Usage(TokenCounts):
    server_tool_use: ServerToolUse | None = None
    service_tier: str | None = None
    speed: str | None = None
    iterations: Raw = Raw(b"null")  # read leniently (_iterations): a new shape must not cost the line its usage


class Iteration(TokenCounts):
    """One sampling step of a request (Anthropic's ``usage.iterations``)."""

    type: str | None = None
    model: str | None = None


# Steps of a request that its top-level usage leaves out, though they are billed: the summary a
# server-side compaction writes (by the request's model), and an advisor's sub-inference (by the advisor's
# model, at its rates). Other steps (``message``) are what the top-level usage adds up.
EXTRA_ITERATIONS = ("compaction", "advisor_message")


class Block(Struct):
    type: str = ""
    id: str | None = None
    name: str | None = None
    input: Raw = Raw(b"")
    tool_use_id: str | None = None
    content: Raw = Raw(b"")
    is_error: bool | None = None
    text: Raw = Raw(b"")  # decoded only for <synthetic> notices: most text is never needed


class Message(Struct):
    id: str | None = None
    model: str | None = None
    role: str | None = None
    content: str | list[Block] | None = None
    stop_reason: str | None = None
    usage: Usage | None = None


class ClaudeLine(Struct):
    type: str | None = None
    sessionId: str | None = None
    timestamp: datetime | None = None
    cwd: str | None = None
    gitBranch: str | None = None
    version: str | None = None
    isSidechain: bool | None = None
    agentId: str | None = None
    requestId: str | None = None
    uuid: str | None = None
    parentUuid: str | None = None
    isApiErrorMessage: bool | None = None
    subtype: str | None = None
    message: Message | None = None
    toolUseResult: Raw = Raw(b"")


_decoder = msgspec.json.Decoder(ClaudeLine)
_any_decoder = msgspec.json.Decoder()


def default_roots() -> list[Path]:
    """Where Claude Code keeps transcripts on this machine (existing or not)."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        roots = []
        for entry in filter(None, (e.strip() for e in env.split(","))):
            p = Path(entry).expanduser()
            roots.append(p if p.name == "projects" else p / "projects")
        return roots
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [home / ".claude" / "projects", xdg / "claude" / "projects"]


def sniff(head: list[Any]) -> bool:
    """True when the first JSON objects of a file look like a Claude Code transcript."""
    for obj in head:
        if not isinstance(obj, dict):
            return False
        if "sessionId" in obj and isinstance(obj.get("type"), str) and "payload" not in obj:
            return True
        if obj.get("type") in ("summary", "file-history-snapshot") and ("leafUuid" in obj or "snapshot" in obj):
            return True
    return False


_PREFIX = re.compile(rb'^\{\s*"(?:type"\s*:\s*"(?:file-history-snapshot|summary|user|assistant)"|parentUuid"|leafUuid")')


def sniff_prefix(first: bytes) -> bool:
    """True when the first bytes of an over-long first line look like a Claude Code line.

    Only the first line counts: a pretty-printed JSON report that mentions ``"sessionId"``
    further down (ccusage's own output, say) is not a transcript.
    """
    line = first.split(b"\n", 1)[0]
    return bool(_PREFIX.match(line)) or (line.startswith(b"{") and b'"sessionId"' in line and b'"payload"' not in line)


@lru_cache(maxsize=256)
def _version_tuple(version: str | None) -> tuple[int, ...] | None:
    if not version:
        return None
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or None


def _project_of(path: str) -> str:
    """The encoded-cwd folder right under ``projects/`` (the project as Claude Code names it).

    Outside a ``projects/`` folder (a copied tree), the session file's folder; for a subagent
    transcript (``<project>/<session>/subagents/agent-<id>.jsonl``) that is the folder above its session's.

    Examples:
        >>> _project_of("/h/.claude/projects/-home-me-app/s1.jsonl"), _project_of("/tmp/-home-me-app/s1/subagents/agent-a.jsonl")
        ('-home-me-app', '-home-me-app')
    """
    parts = PurePath(path).parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "projects" and i + 1 < len(parts) - 1:
            return parts[i + 1]
    parent = PurePath(path).parent
    if parent.name == "subagents" and len(parent.parents) >= 2:
        return parent.parent.parent.name
    return parent.name


def _subagent_of(path: str) -> str | None:
    """The agent id of a subagent transcript, else None.

    Current Claude Code writes them to ``<session>/subagents/agent-<id>.jsonl``;
    older versions wrote ``agent-<id>.jsonl`` next to the session files. Either
    way the lines carry the parent's ``sessionId``.
    """
    stem = PurePath(path).stem
    return stem.removeprefix("agent-") if stem.startswith("agent-") else None


def oversize_skip_rule(first_bytes: bytes) -> str | None:
    """The skip rule for a line too long to parse, judged by its first bytes (only snapshots qualify)."""
    return "type:file-history-snapshot" if _SNAPSHOT_START.match(first_bytes) else None


def sidecar_path(path: str) -> str | None:
    """``agent-<id>.meta.json`` next to a subagent transcript (it names the subagent's type)."""
    p = PurePath(path)
    return str(p.with_name(p.stem + ".meta.json")) if _subagent_of(path) is not None else None


def _result_size(content: Raw) -> tuple[int, str, bytes]:
    """(bytes the model sees, content types, bytes hashed) of a tool_result's content."""
    if not content:
        return 0, "", b""
    raw = bytes(content)
    if raw[:1] == b'"' and b"\\" not in raw:
        # A JSON string without escapes: its bytes are the text (most results); no decode needed.
        return len(raw) - 2, "text", raw[1:-1]
    try:
        value = _any_decoder.decode(raw)
    except RecursionError:
        return len(raw), "json", raw  # too deep to walk: measured as the JSON it is
    if isinstance(value, str):
        data = value.encode("utf-8")
        return len(data), "text", data
    if isinstance(value, list):
        size, types, chunks = 0, set(), []
        for part in value:
            if not isinstance(part, dict):
                continue
            kind = str(part.get("type", "unknown"))
            types.add(kind)
            if kind == "text" and isinstance(part.get("text"), str):
                data = part["text"].encode("utf-8")
            elif kind == "image" and isinstance(part.get("source"), dict):
                data = str(part["source"].get("data", "")).encode("utf-8")
            else:
                data = msgspec.json.encode(part)
            size += len(data)
            chunks.append(data)
        return size, ",".join(sorted(types)), b"\n".join(chunks)
    return len(raw), "json", raw


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse Claude Code transcript lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    project = _project_of(path)
    subagent = _subagent_of(path)
    for line in lines:
        data = line.data
        if not data.strip():
            result.skipped["blank-line"] += 1
            continue
        if _SNAPSHOT_START.match(data):
            result.skipped["type:file-history-snapshot"] += 1
            continue
        try:
            check_utf8(data)
            obj = _decoder.decode(data)
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        if obj.type not in USED_TYPES:
            result.skipped[f"type:{obj.type}"] += 1
            continue
        _use_line(result, line, obj, project, subagent)
        result.lines_ok += 1
    return result


def _use_line(result: ParseResult, line: Line, obj: ClaudeLine, project: str, subagent: str | None) -> None:
    ts = utc_naive(obj.timestamp)
    raw_session = obj.sessionId or result.state.get("session_uuid")
    if raw_session is None:
        # Lines before any session id (a leading `summary`) describe no session of their own.
        return
    result.state["session_uuid"] = raw_session
    parent_id = f"claude-code:{raw_session}"
    inline = _inline_subagent(result.state, obj) if subagent is None and obj.isSidechain else None
    if subagent is not None or inline is not None:
        agent_id = obj.agentId or subagent or inline
        session_id = f"{parent_id}:agent-{agent_id}"
    else:
        agent_id, session_id = obj.agentId, parent_id
    session = result.seen_session(session_id, ts)
    if session is None:
        result.add_session(
            {
                "session_id": session_id,
                "agent": AGENT,
                "project": project,
                "cwd": obj.cwd,
                "git_branch": obj.gitBranch or None,
                "parent_session_id": parent_id if session_id != parent_id else None,
                "agent_id": agent_id,
                "agent_version": obj.version,
                "subagent_type": _subagent_type(result.state) if subagent is not None else "subagent" if session_id != parent_id else None,
                "started_at_utc": ts,
                "ended_at_utc": ts,
            }
        )
    else:
        # Later lines describe the session's latest state (branch switched, agent upgraded).
        if obj.gitBranch:
            session["git_branch"] = obj.gitBranch
        if obj.version:
            session["agent_version"] = obj.version
        if session["cwd"] is None:
            session["cwd"] = obj.cwd
    message = obj.message
    if obj.type == "system" and obj.subtype == "compact_boundary":
        result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": "compaction", "detail": None})
    if message is None:
        return
    blocks = message.content if isinstance(message.content, list) else []
    if obj.type == "assistant":
        if message.model == "<synthetic>":
            _synthetic_event(result, line, obj, session_id, ts)
            return
        call_key = _add_call(result, line, obj, session_id, ts)
        for block in blocks:
            if block.type == "tool_use" and block.id:
                _add_tool_use(result, line, block, session_id, call_key, ts)
    elif obj.type == "user":
        for block in blocks:
            if block.type == "tool_result" and block.tool_use_id:
                size, types, hashed = _result_size(block.content)
                row = {
                    **result_features(hashed),
                    "tool_call_id": block.tool_use_id,
                    "session_id": session_id,
                    "result_line_no": line.line_no,
                    "result_ts_utc": ts,
                    "result_bytes": size,
                    "result_sha256": sha256_hex(hashed),
                    "result_content_types": types,
                    "result_truncated": False,
                    "is_error": bool(block.is_error),
                }
                duration = _reported_duration_ms(obj.toolUseResult)
                if duration is not None:
                    row["duration_ms"], row["duration_method"] = duration, "reported"
                result.add_tool_call(row)


def _reported_duration_ms(raw: Raw) -> int | None:
    """``durationMs`` / ``totalDurationMs`` from a ``toolUseResult`` object, when the tool reports one."""
    data = bytes(raw)
    if b"urationMs" not in data:
        return None  # most results carry none: do not decode them
    try:
        value = _any_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key in ("durationMs", "totalDurationMs"):
        ms = value.get(key)
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0:
            return round(ms)
    return None


# Inline subagent chains remembered per file (their lines' uuids), at most this many: a transcript of thousands
# of subagent turns keeps the latest; a line whose parent was forgotten starts a chain of its own.
MAX_INLINE_UUIDS = 20_000


def _inline_subagent(state: dict[str, Any], obj: ClaudeLine) -> str | None:
    """The subagent a sidechain line of a main transcript belongs to, or None when it belongs to the session.

    Claude Code before the ``subagents/`` files (1.x–2.0.x) wrote a Task's subagent into the parent's
    transcript, each turn marked ``isSidechain``: a chain of its own, rooted at the subagent's prompt (a line
    with no ``parentUuid``), sometimes with an ``agentId``. Such a chain is the subagent, named by its
    ``agentId`` or its root's uuid. A sidechain line whose chain leads back into the session's own (a
    ``/btw`` side question replaying a message) stays in the session; the store's dedup view drops the replay.
    """
    chains: dict[str, str] = state.setdefault("inline_chains", {})
    owner = chains.get(obj.parentUuid) if obj.parentUuid else None
    if owner is None:
        if obj.agentId:
            owner = obj.agentId
        elif obj.parentUuid is None and obj.uuid:
            owner = obj.uuid
    if owner is not None and obj.uuid:
        if len(chains) >= MAX_INLINE_UUIDS:
            chains.pop(next(iter(chains)))
        chains[obj.uuid] = owner
    return owner


def _subagent_type(state: dict[str, Any]) -> str:
    meta = state.get("sidecar") or {}
    kind = meta.get("agentType") if isinstance(meta, dict) else None
    return kind if isinstance(kind, str) and kind else "subagent"


def _decode_or_none(raw: Raw) -> Any:
    try:
        return _any_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None


def _synthetic_event(result: ParseResult, line: Line, obj: ClaudeLine, session_id: str, ts: datetime | None) -> None:
    message = obj.message
    text = ""
    if message is not None and isinstance(message.content, list):
        texts = (_decode_or_none(b.text) for b in message.content if b.type == "text" and b.text)
        text = " ".join(t for t in texts if isinstance(t, str))
    elif message is not None and isinstance(message.content, str):
        text = message.content
    kind = "usage_limit" if "usage limit reached" in text.lower() else "api_error" if obj.isApiErrorMessage else "synthetic_message"
    result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": kind, "detail": text[:200] or None})


def _add_call(result: ParseResult, line: Line, obj: ClaudeLine, session_id: str, ts: datetime | None) -> str | None:
    message = obj.message
    usage = message.usage
    if usage is None:
        return None
    if message.id:
        call_key = f"claude:{message.id}:{obj.requestId or ''}"
    else:
        call_key = f"claude-line:{session_id}:{obj.uuid or line.line_no}"
        result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": "no_dedup_key", "detail": "assistant usage without message.id"})
    write_5m, write_1h, ttl_known = _cache_writes(usage.cache_creation_input_tokens, usage.cache_creation)
    known = result.llm_calls.get(call_key)
    if known is not None:
        line_total = (usage.input_tokens or 0) + (usage.cache_read_input_tokens or 0) + write_5m + write_1h + (usage.output_tokens or 0)
        known_total = total_tokens(known)
        if line_total < known_total or (line_total == known_total and (usage.speed is None or known["speed"] is not None)):
            return call_key  # another content-block line of a request already held with as many tokens
    version = _version_tuple(obj.version)
    lower_bound = message.stop_reason is None and (version is None or version < PLACEHOLDER_FIXED_IN)
    server_tools = usage.server_tool_use
    result.add_llm_call(
        {
            "call_key": call_key,
            "session_id": session_id,
            "line_no": line.line_no,
            "ts_utc": ts,
            "provider": "anthropic",
            "model": message.model,
            "message_id": message.id,
            "request_id": obj.requestId,
            "input_tokens": usage.input_tokens or 0,
            "cache_read_tokens": usage.cache_read_input_tokens or 0,
            "cache_write_5m_tokens": write_5m,
            "cache_write_1h_tokens": write_1h,
            "output_tokens": usage.output_tokens or 0,
            "reasoning_tokens": None,
            "web_search_requests": (server_tools.web_search_requests or 0) if server_tools else 0,
            "context_window_tokens": None,
            "usage_source": "reported",
            "output_is_lower_bound": lower_bound,
            "cache_ttl_known": ttl_known,
            "is_sidechain": bool(obj.isSidechain),
            "is_aggregate": False,
            "stop_reason": message.stop_reason,
            "service_tier": usage.service_tier,
            "speed": usage.speed,
        }
    )
    for index, step in _iterations(usage.iterations):
        # Its own request row (keyed under the request's), kept with the line that carries the request.
        s_5m, s_1h, s_ttl_known = _cache_writes(step.cache_creation_input_tokens, step.cache_creation)
        result.add_llm_call(
            {
                **result.llm_calls[call_key],
                "call_key": f"{call_key}#{index}:{step.type}",
                "model": step.model or message.model,
                "input_tokens": step.input_tokens or 0,
                "cache_read_tokens": step.cache_read_input_tokens or 0,
                "cache_write_5m_tokens": s_5m,
                "cache_write_1h_tokens": s_1h,
                "output_tokens": step.output_tokens or 0,
                "web_search_requests": 0,
                "output_is_lower_bound": False,
                "cache_ttl_known": s_ttl_known,
                "stop_reason": None,
                "speed": None,
            }
        )
    return call_key


def _cache_writes(total: int | None, split: CacheCreation | None) -> tuple[int, int, bool]:
    """(5-minute, 1-hour, TTL known): the split when the log gives it, else every write booked as 5-minute.
    A split short of the total (lines relayed through some API gateways) books the rest as 5-minute, TTL
    unknown: the total is what was billed, and dropping the rest would lose tokens."""
    if split is not None and (split.ephemeral_5m_input_tokens is not None or split.ephemeral_1h_input_tokens is not None):
        write_5m, write_1h = split.ephemeral_5m_input_tokens or 0, split.ephemeral_1h_input_tokens or 0
        rest = (total or 0) - write_5m - write_1h
        return (write_5m + rest, write_1h, False) if rest > 0 else (write_5m, write_1h, True)
    return total or 0, 0, not total


def _iterations(raw: Raw) -> list[tuple[int, Iteration]]:
    """The steps of ``usage.iterations`` its top-level usage leaves out (``EXTRA_ITERATIONS``), with their
    positions. A step of another shape is left out, never the request."""
    try:
        steps = _any_decoder.decode(raw) if raw else None
    except (msgspec.DecodeError, RecursionError):
        return []
    if not isinstance(steps, list):
        return []
    out = []
    for index, step in enumerate(steps):
        if isinstance(step, dict) and step.get("type") in EXTRA_ITERATIONS:
            try:
                out.append((index, msgspec.convert(step, Iteration)))
            except msgspec.ValidationError:
                continue
    return out


def _add_tool_use(result: ParseResult, line: Line, block: Block, session_id: str, call_key: str | None, ts: datetime | None) -> None:
    name = block.name or ""
    server, tool = split_mcp_name(name)
    args = bytes(block.input)
    result.add_tool_call(
        {
            "tool_call_id": block.id,
            "session_id": session_id,
            "call_key": call_key,
            "line_no": line.line_no,
            "ts_utc": ts,
            "tool_name": name,
            "tool_kind": "mcp" if server else "builtin",
            "mcp_server": server,
            "mcp_tool": tool,
            "args_bytes": len(args),
            "args_sha256": sha256_hex(args),
            "args_skeleton": args_skeleton(args) if args else None,
            "args_values": args_values(args) if args else None,
        }
    )
