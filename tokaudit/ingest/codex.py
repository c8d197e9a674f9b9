"""Codex CLI rollout files (``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Shape: one ``{"timestamp", "type", "payload"}`` object per line, ``type`` =
session_meta | turn_context | response_item | event_msg | compacted.

Usage comes from ``event_msg`` / ``token_count`` events whose
``info.total_token_usage`` is a running total per file. Codex re-emits the same
event (about half of all events, ccusage#884): a row is written only when the
total advanced, and the row is the difference of totals; ``info: null`` events
carry rate limits only and are skipped. A total that goes backwards is a
counter reset: the event's own ``last_token_usage`` is used for that row.

Mapping (OpenAI usage is inclusive): ``input_tokens ← input_tokens −
cached_input_tokens − cache_write_input_tokens``; ``cache_read_tokens ←
cached_input_tokens`` (clamped to input); ``cache_write_5m_tokens ←
cache_write_input_tokens`` (some builds; TTL unknown); ``output_tokens ←
output_tokens`` (reasoning included); ``reasoning_tokens ←
reasoning_output_tokens``.

Dedup key: ``codex:`` + hash of (timestamp, model, the five token deltas), so
the same call copied into another file (Codex Desktop branches) is counted once.

Forks and subagents (ccusage#1349): such a file starts with the child's
``session_meta`` (``source.subagent.thread_spawn`` or ``forked_from_id``) and
the parent's, then replays the parent's history stamped with one second. Those
replayed lines are skipped by rule ``fork-replay`` (their totals still move the
baseline, so the child's own calls are the differences after it).

Older rollouts (before the envelope) start with a ``{"id", "timestamp",
"instructions"}`` header and write response items directly, with
``record_type: "state"`` markers; they logged no token counts, so they give a
session and tool calls, never model requests.

The model is the latest ``turn_context.model`` (or ``info.model``), a fork's replayed
ones included; rows before any is known have a NULL model (shown as unpriced). Function, custom and web-search tool calls
become tool calls; ``compacted`` / ``context_compacted`` become events.

A tool call's error flag and run time come only from what Codex wrote itself: the header above a
shell's output or its JSON metadata, an MCP output kept as the whole ``CallToolResult``, and the
``mcp_tool_call_end`` / ``exec_command_end`` / ``patch_apply_end`` events Codex writes when it
persists its extended events (matched to the call by ``call_id``). The text of an MCP answer is the
server's, so it is never read for a flag.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest.base import (
    Line,
    ParseResult,
    answer_text,
    check_utf8,
    result_features,
    sha256_hex,
    split_mcp_name,
    utc_naive,
)
from tokaudit.ingest.skeleton import args_skeleton, args_values

FORMAT = "codex"
AGENT = "codex"
FILE_PATTERNS = ("*.jsonl",)  # names picked up when walking a folder

# No real count comes near 10^15; a larger one is a corrupt line (and would not fit the store's BIGINT).
Tokens = Annotated[int, Meta(ge=0, le=10**15)]
LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_TOTAL_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "cache_write_input_tokens")


class Envelope(Struct):
    type: str = ""
    timestamp: datetime | None = None
    payload: Raw = Raw(b"null")
    id: str | None = None  # pre-envelope rollouts: the session header line
    record_type: str | None = None  # pre-envelope rollouts: state markers


class SessionMeta(Struct):
    id: str | None = None
    cwd: str | None = None
    cli_version: str | None = None
    originator: str | None = None
    model_provider: str | None = None
    source: Raw = Raw(b"null")
    forked_from_id: str | None = None


class TurnContext(Struct):
    model: str | None = None
    cwd: str | None = None


class TokenUsage(Struct):
    input_tokens: Tokens = 0
    cached_input_tokens: Tokens = 0
    output_tokens: Tokens = 0
    reasoning_output_tokens: Tokens = 0
    cache_write_input_tokens: Tokens = 0
    total_tokens: Tokens = 0


class TokenInfo(Struct):
    total_token_usage: TokenUsage | None = None
    last_token_usage: TokenUsage | None = None
    model_context_window: Tokens | None = None
    model: str | None = None


class EventMsg(Struct):
    type: str | None = None
    info: TokenInfo | None = None
    message: Raw = Raw(b"null")
    # The end of a tool's run (``*_end`` events, which Codex writes when it persists its extended events):
    # kept raw, read leniently, so a shape Codex changes later never makes the line a problem.
    call_id: Raw = Raw(b"null")
    invocation: Raw = Raw(b"null")
    result: Raw = Raw(b"null")
    exit_code: Raw = Raw(b"null")
    success: Raw = Raw(b"null")
    duration: Raw = Raw(b"null")


class ResponseItem(Struct):
    type: str | None = None
    name: str | None = None
    arguments: Raw = Raw(b"null")
    input: Raw = Raw(b"null")
    output: Raw = Raw(b"null")
    action: Raw = Raw(b"null")
    call_id: str | None = None
    id: str | None = None
    status: str | None = None


_envelope = msgspec.json.Decoder(Envelope)
_session_meta = msgspec.json.Decoder(SessionMeta)
_turn_context = msgspec.json.Decoder(TurnContext)
_event_msg = msgspec.json.Decoder(EventMsg)
_response_item = msgspec.json.Decoder(ResponseItem)
_any = msgspec.json.Decoder()

# response_item types that are tool calls -> the name to use when the item has none.
_TOOL_ITEMS = {"function_call": "", "custom_tool_call": "", "web_search_call": "web_search", "local_shell_call": "local_shell"}
_TOOL_KINDS = {"function_call": "function", "custom_tool_call": "custom", "web_search_call": "web_search", "local_shell_call": "function"}

_EVENT_KINDS = {
    "context_compacted": "compaction_notice",
    "task_complete": "task_complete",
    "turn_aborted": "turn_aborted",
    "error": "error",
    "stream_error": "error",
}


def default_roots() -> list[Path]:
    """Where Codex keeps rollouts on this machine (existing or not)."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()
    return [home / "sessions", home / "archived_sessions"]


def sniff(head: list[Any]) -> bool:
    """True when the first JSON objects of a file look like a Codex rollout (any generation)."""
    first = head[0] if head else None
    if isinstance(first, dict) and _is_legacy_header(first):
        return True
    for obj in head:
        if not isinstance(obj, dict):
            return False
        if isinstance(obj.get("type"), str) and obj["type"] in LINE_TYPES and "payload" in obj and "timestamp" in obj:
            return True
        if obj.get("record_type") == "state":
            return True
    return False


def _is_legacy_header(obj: dict[str, Any]) -> bool:
    """First line of pre-envelope rollouts: the session itself, ``{"id", "timestamp", "instructions"}``."""
    return isinstance(obj.get("id"), str) and isinstance(obj.get("timestamp"), str) and "instructions" in obj and "type" not in obj


_PREFIX = re.compile(rb'^\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"(?:session_meta|turn_context|response_item|event_msg|compacted)"')


def sniff_prefix(first: bytes) -> bool:
    """True when the first bytes of an over-long first line look like a Codex rollout line."""
    return bool(_PREFIX.match(first))


def _as_text(raw: Raw) -> bytes:
    """The bytes a model saw for an arguments/input/output field (a JSON string or any JSON value)."""
    if not raw or bytes(raw) == b"null":
        return b""
    value = _any.decode(raw)
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(raw)


def _output_outcome(text: bytes, tool_kind: str | None) -> tuple[bool | None, int | None, bytes]:
    """Whether a tool's output says it failed, how long Codex says it ran (ms), where the rollout keeps them, and
    the text the tool answered: what the result's features (excerpt, signature, pointers) are read from.

    Codex writes its own shell outputs either as JSON ``{"output", "metadata": {"exit_code",
    "duration_seconds"}}`` or as text under a header of its own (``Exit code: 1`` / ``Process exited with
    code 1``, ``Wall time: 0.4 seconds``, then ``Output:``). An MCP call's output is, in the Codex versions
    that write the server's whole answer, the MCP ``CallToolResult`` as JSON (``{"content": [...],
    "isError": true}``); later versions keep the answer's text only, which says nothing. A shell header is
    not read from an MCP output, nor a ``CallToolResult`` from a shell's: a server writes its own text.
    ``tool_kind`` is None when the call was logged before this part of the file (a grown file).

    Inside such JSON the answer's own text is a string, its quotes escaped and its lines joined: the shell's
    ``output``, or the ``CallToolResult``'s text blocks, stand for the answer (a cursor under its key, a status
    at its head, the server's words), not the wrapper Codex put around them. The result's size and hash stay
    those of the whole output, which is what the model read.
    """
    if text.startswith(b"{"):
        try:
            value = _any.decode(text)
        except (msgspec.DecodeError, RecursionError):
            return None, None, text
        if not isinstance(value, dict):
            return None, None, text
        meta = value.get("metadata")
        if tool_kind != "mcp" and isinstance(meta, dict) and _is_int(meta.get("exit_code")):
            seconds = meta.get("duration_seconds")
            output = value.get("output")
            return meta["exit_code"] != 0, _seconds_ms(seconds), output.encode(errors="replace") if isinstance(output, str) else text
        if tool_kind in ("mcp", None) and isinstance(value.get("isError"), bool) and isinstance(value.get("content"), list):
            return value["isError"], None, answer_text(value["content"]) or text
        return None, None, text
    if tool_kind == "mcp":
        return None, None, text
    return (*_shell_header(text), text)


_HEADER_EXIT = re.compile(rb"(?:Exit code: |Process exited with code )(-?\d{1,10})")
_HEADER_WALL = re.compile(rb"Wall time: (\d{1,9}(?:\.\d{1,9})?) seconds")


def _shell_header(text: bytes) -> tuple[bool | None, int | None]:
    """The exit code and wall time of the header Codex puts above a shell command's output (a few
    ``Name: value`` lines, then ``Output:``); nothing when the text has no such header."""
    head = text[:1024].split(b"\n", 9)
    if b"Output:" not in (line.rstrip(b"\r") for line in head[:8]):
        return None, None
    exit_code = duration_ms = None
    for line in head[:8]:
        line = line.rstrip(b"\r")
        if line == b"Output:":
            break
        if (m := _HEADER_EXIT.fullmatch(line)) is not None:
            exit_code = int(m[1])
        elif (m := _HEADER_WALL.fullmatch(line)) is not None:
            duration_ms = _seconds_ms(float(m[1]))
    return (None if exit_code is None else exit_code != 0), duration_ms


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seconds_ms(seconds: Any) -> int | None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < 10**9:
        return None
    return round(seconds * 1000)


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse Codex rollout lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    st = result.state
    st.setdefault("totals", [0, 0, 0, 0, 0])
    st.setdefault("metas", 0)
    st.setdefault("pending_tools", [])
    for line in lines:
        if not line.data.strip():
            result.skipped["blank-line"] += 1
            continue
        try:
            check_utf8(line.data)
            env = _envelope.decode(line.data)
            outcome = _legacy_line(result, env, path) if not env.type else _use_line(result, line, env, path)
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        if outcome is None:
            result.lines_ok += 1
        else:
            result.skipped[outcome] += 1
    return result


def _legacy_line(result: ParseResult, env: Envelope, path: str) -> str | None:
    """Lines of pre-envelope rollouts that are not response items: the header, state markers.

    Those generations logged no token counts, so their files give sessions and
    tool calls but never model requests.
    """
    if env.record_type is not None:
        return "legacy-state-record"
    if env.id is not None and "session_uuid" not in result.state:
        result.state["session_uuid"] = env.id
        ts = utc_naive(env.timestamp)
        result.add_session({"session_id": _session_id(result.state, path), "agent": AGENT, "started_at_utc": ts, "ended_at_utc": ts})
        return None
    return "type:(none)"


def _session_id(st: dict[str, Any], path: str) -> str:
    return f"codex:{st.get('session_uuid') or Path(path).stem}"


def _use_line(result: ParseResult, line: Line, env: Envelope, path: str) -> str | None:
    """Use one line; return the skip rule's name when the line is deliberately not used."""
    st = result.state
    ts = utc_naive(env.timestamp)
    if env.type not in LINE_TYPES:
        if env.type in _TOOL_ITEMS or env.type.endswith("_output"):
            # Pre-envelope rollouts write response items directly, without timestamps.
            return _response_item_line(result, line, _response_item.decode(line.data), _session_id(st, path), None)
        return f"type:{env.type}"
    if env.type == "session_meta":
        return _session_meta_line(result, env, ts, path)
    if _in_fork_replay(st, ts):
        # Replayed totals still move the baseline the child's own calls are measured from, and the
        # replayed model is the latest one known: a child that sets none of its own goes on with it.
        if env.type == "event_msg":
            event = _event_msg.decode(env.payload)
            if event.type == "token_count" and event.info and event.info.total_token_usage:
                st["totals"] = [getattr(event.info.total_token_usage, f) for f in _TOTAL_FIELDS]
                st["model"] = event.info.model or st.get("model")
        elif env.type == "turn_context":
            st["model"] = _turn_context.decode(env.payload).model or st.get("model")
        return "fork-replay"
    session_id = _session_id(st, path)
    if ts is not None and result.seen_session(session_id, ts) is None:
        result.add_session({"session_id": session_id, "agent": AGENT, "started_at_utc": ts, "ended_at_utc": ts})
    if env.type == "turn_context":
        ctx = _turn_context.decode(env.payload)
        if ctx.model:
            st["model"] = ctx.model
        return None
    if env.type == "compacted":
        result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": "compaction", "detail": None})
        return None
    if env.type == "event_msg":
        return _event_line(result, line, _event_msg.decode(env.payload), session_id, ts)
    return _response_item_line(result, line, _response_item.decode(env.payload), session_id, ts)


def _session_meta_line(result: ParseResult, env: Envelope, ts: datetime | None, path: str) -> str | None:
    st = result.state
    st["metas"] += 1
    if st["metas"] > 1:
        # A fork's second session_meta describes the parent thread, not this file.
        return "fork-parent-meta"
    meta = _session_meta.decode(env.payload)
    source = _any.decode(meta.source) if meta.source else None
    spawned_from = None
    if isinstance(source, dict):
        spawn = (source.get("subagent") or {}).get("thread_spawn") if isinstance(source.get("subagent"), dict) else None
        if isinstance(spawn, dict):
            spawned_from = spawn.get("parent_thread_id")
    st["session_uuid"] = meta.id
    st["provider"] = meta.model_provider
    if spawned_from or meta.forked_from_id:
        st["fork"] = {"second": None, "done": False}
    parent = spawned_from or meta.forked_from_id
    result.add_session(
        {
            "session_id": _session_id(st, path),
            "agent": AGENT,
            "project": meta.cwd,
            "cwd": meta.cwd,
            "parent_session_id": f"codex:{parent}" if parent else None,
            "subagent_type": "thread_spawn" if spawned_from else "fork" if meta.forked_from_id else None,
            "agent_version": meta.cli_version,
            "task_label": None,
            "started_at_utc": ts,
            "ended_at_utc": ts,
        }
    )
    return None


def _in_fork_replay(st: dict[str, Any], ts: datetime | None) -> bool:
    fork = st.get("fork")
    if not fork or fork["done"] or ts is None:
        return False
    second = ts.replace(microsecond=0).isoformat()
    if fork["second"] is None:
        fork["second"] = second
    if second == fork["second"]:
        return True
    fork["done"] = True
    return False


def _event_line(result: ParseResult, line: Line, event: EventMsg, session_id: str, ts: datetime | None) -> str | None:
    if event.type in _TOOL_END_EVENTS:
        _tool_end(result, event, session_id)
        return None
    if event.type != "token_count":
        kind = _EVENT_KINDS.get(event.type or "")
        if kind:
            result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": ts, "kind": kind, "detail": None})
        return None
    info = event.info
    if info is None or (info.total_token_usage is None and info.last_token_usage is None):
        return "token-count-no-info"
    st = result.state
    if info.model:
        st["model"] = info.model
    if info.total_token_usage is None:
        # Builds that report only the per-call usage: nothing to difference, so each event is a
        # call; repeats are recognised by the dedup key (same time, model and counts).
        last = info.last_token_usage
        _add_call(result, line, [getattr(last, f) for f in _TOTAL_FIELDS], info, session_id, ts)
        return None
    totals = [getattr(info.total_token_usage, f) for f in _TOTAL_FIELDS]
    delta = [new - old for new, old in zip(totals, st["totals"])]
    if all(d == 0 for d in delta):
        return "token-count-repeat"
    if any(d < 0 for d in delta):
        last = info.last_token_usage or info.total_token_usage
        delta = [getattr(last, f) for f in _TOTAL_FIELDS]
    st["totals"] = totals
    _add_call(result, line, delta, info, session_id, ts)
    return None


# Events that close a tool's run, which Codex writes beside the call and its output when it persists its
# extended events: they carry what the output's text lost (an MCP answer's error flag) and the run's time.
_TOOL_END_EVENTS = frozenset({"mcp_tool_call_end", "exec_command_end", "patch_apply_end"})


def _tool_end(result: ParseResult, event: EventMsg, session_id: str) -> None:
    """Add to a tool call what the event ending its run says: whether it failed, how long it took, and for
    an MCP call its server and tool (so a call whose request line is missing is still named)."""
    call_id = _any.decode(event.call_id)
    if not isinstance(call_id, str) or not call_id:
        return
    row: dict[str, Any] = {"tool_call_id": call_id, "session_id": session_id}
    is_error = _end_is_error(event)
    if is_error is not None:
        row["is_error"] = is_error
    duration = _any.decode(event.duration)
    if isinstance(duration, dict) and _is_int(duration.get("secs")) and _is_int(duration.get("nanos")):
        row["duration_ms"] = duration["secs"] * 1000 + round(duration["nanos"] / 1e6)
        row["duration_method"] = "reported"
    invocation = _any.decode(event.invocation)
    if isinstance(invocation, dict) and isinstance(invocation.get("server"), str) and isinstance(invocation.get("tool"), str):
        server, tool = invocation["server"], invocation["tool"]
        row.update(tool_name=f"mcp__{server}__{tool}", tool_kind="mcp", mcp_server=server, mcp_tool=tool)
    if len(row) > 2:
        result.add_tool_call(row)


def _end_is_error(event: EventMsg) -> bool | None:
    """A run's failure as its end event records it: a shell's exit code, a patch's success, an MCP call's
    ``Err`` (the request failed) or its answer's ``isError``."""
    exit_code = _any.decode(event.exit_code)
    if _is_int(exit_code):
        return exit_code != 0
    success = _any.decode(event.success)
    if isinstance(success, bool):
        return not success
    outcome = _any.decode(event.result)
    if not isinstance(outcome, dict):
        return None
    if "Err" in outcome:
        return True
    answer = outcome.get("Ok", outcome)
    flag = answer.get("isError", answer.get("is_error")) if isinstance(answer, dict) else None
    if isinstance(flag, bool):
        return flag
    # An answer the request got (``Ok``) with no flag is a success: MCP's ``isError`` defaults to false.
    return False if "Ok" in outcome else None


def _add_call(result: ParseResult, line: Line, delta: list[int], info: TokenInfo, session_id: str, ts: datetime | None) -> None:
    st = result.state
    input_total, cached, output, reasoning, cache_write = delta
    cached = min(cached, input_total)
    cache_write = min(cache_write, input_total - cached)
    model = st.get("model")
    key_material = f"{ts.isoformat() if ts else line.line_no}|{model}|{input_total}|{cached}|{output}|{reasoning}|{cache_write}"
    call_key = "codex:" + hashlib.sha256(key_material.encode()).hexdigest()[:32]
    result.add_llm_call(
        {
            "call_key": call_key,
            "session_id": session_id,
            "line_no": line.line_no,
            "ts_utc": ts,
            "provider": st.get("provider") or "openai",
            "model": model,
            "message_id": None,
            "request_id": None,
            "input_tokens": input_total - cached - cache_write,
            "cache_read_tokens": cached,
            "cache_write_5m_tokens": cache_write,
            "cache_write_1h_tokens": 0,
            "output_tokens": output,
            "reasoning_tokens": reasoning,
            "web_search_requests": 0,
            "context_window_tokens": info.model_context_window,
            "usage_source": "reported",
            "output_is_lower_bound": False,
            "cache_ttl_known": cache_write == 0,
            "is_sidechain": False,
            "is_aggregate": False,
            "stop_reason": None,
            "service_tier": None,
            "speed": None,
        }
    )
    # Tool calls logged since the previous usage event were asked for by this request.
    for tool_call_id in st["pending_tools"]:
        if tool_call_id in result.tool_calls:
            result.tool_calls[tool_call_id]["call_key"] = call_key
    st["pending_tools"] = []


def _response_item_line(result: ParseResult, line: Line, item: ResponseItem, session_id: str, ts: datetime | None) -> str | None:
    kind = item.type
    if kind in _TOOL_ITEMS:
        tool_call_id = item.call_id or item.id or f"line-{line.line_no}"
        name = item.name or _TOOL_ITEMS[kind]
        args = _as_text({"function_call": item.arguments, "custom_tool_call": item.input}.get(kind, item.action))
        server, tool = split_mcp_name(name)
        result.add_tool_call(
            {
                "tool_call_id": tool_call_id,
                "session_id": session_id,
                "call_key": None,
                "line_no": line.line_no,
                "ts_utc": ts,
                "tool_name": name,
                "tool_kind": "mcp" if server else _TOOL_KINDS[kind],
                "mcp_server": server,
                "mcp_tool": tool,
                "args_bytes": len(args),
                "args_sha256": sha256_hex(args),
                "args_skeleton": args_skeleton(args) if args else None,
                "args_values": args_values(args) if args else None,
            }
        )
        result.state["pending_tools"].append(tool_call_id)
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output") and item.call_id:
        text = _as_text(item.output)
        call = result.tool_calls.get(item.call_id)
        is_error, duration_ms, answer = _output_outcome(text, call.get("tool_kind") if call else None)
        result.add_tool_call(
            {
                **result_features(answer),
                "tool_call_id": item.call_id,
                "session_id": session_id,
                "result_line_no": line.line_no,
                "result_ts_utc": ts,
                "result_bytes": len(text),
                "result_sha256": sha256_hex(text),
                "result_content_types": "text",
                "result_truncated": False,
                "is_error": is_error,
                "duration_ms": duration_ms,
                "duration_method": "reported" if duration_ms is not None else None,
            }
        )
    return None
