"""OpenHands trajectories: one JSON list of events per file (``*.json``).

Location: no fixed folder. OpenHands writes a trajectory where
``save_trajectory_path`` points (headless and evaluation runs), so
``default_roots()`` is empty: point ``tokaudit ingest`` at the files. (Evaluation ``output.jsonl`` files are the
``openhands-eval`` format, which reuses this module's event walker.)

Shape: ``[{id, timestamp, source, message, action | observation, cause, args |
content + extras, tool_call_metadata, llm_metrics}, ...]``, usually
pretty-printed. The document is the unit of line accounting (``WHOLE_FILE``):
one "line" per file, used or a problem.

Usage: an action the model asked for carries ``tool_call_metadata{function_name,
tool_call_id, model_response{id, model, created, choices, usage},
total_calls_in_response}``. ``usage`` is LiteLLM's OpenAI shape, whose
``prompt_tokens`` *includes* cache reads and writes (also for Anthropic
models: 4646 = 6 + 1158 + 3482). The observation answering an action repeats
the same ``model_response``, and with ``total_calls_in_response > 1`` several
actions share one. Mapping, per distinct response:
``input_tokens ← prompt_tokens − cache_read − cache_write``;
``cache_read_tokens ← prompt_tokens_details.cached_tokens`` (else
``cache_read_input_tokens``); ``cache_write_5m_tokens ←
cache_creation_input_tokens`` (TTL not logged: ``cache_ttl_known`` false when
non-zero); ``output_tokens ← completion_tokens``; ``reasoning_tokens ←
completion_tokens_details.reasoning_tokens`` (NULL when absent, at most the
output). Cache parts are clamped so input never goes negative. A response without ``usage`` gives no row.

Dedup key: ``openhands:<model_response.id>`` (the same key the
``openhands-eval`` format uses, so one run ingested both ways counts once). A
response without an id is keyed by a hash of (model, created, usage).

Reconciliation: newer builds stamp actions with ``llm_metrics``, a running
*cumulative* snapshot; it is never summed. When the last snapshot's
``accumulated_token_usage`` exceeds the per-response sums (calls whose response
was not logged, e.g. a plain message reply), the difference is stored as one
``is_aggregate`` row keyed ``openhands:unattributed:<session_id>`` so totals
stay exact. Costs: ``accumulated_cost`` is for the whole conversation, not a
call, so no per-call row carries ``reported_cost_usd``.

Timestamps: event timestamps are the machine's *local* time without a zone,
while ``model_response.created`` is a UTC epoch. The zone offset is inferred as
the most common (event time − created), rounded to 15 minutes, and taken off
every event time; with no ``created`` to compare against, naive times are
taken as UTC. A call's ``ts_utc`` is its response's ``created``.

Tool calls: each action with ``tool_call_metadata.tool_call_id`` is one call
(``tool_call_id`` as logged; a repeat of an id already used by another action
gets ``#<event id>`` appended). Arguments are the model's own
``choices[].message.tool_calls[].function.arguments`` for that id; the result
is the ``content`` of the observation whose ``cause`` is the action's ``id``
(the text the model is shown, before OpenHands' own prompt formatting).
``is_error``: an ``error`` observation, ``success: false``, an ``mcp``
observation whose CallToolResult says ``isError``, or a non-zero
``extras.metadata.exit_code`` (``extras.exit_code`` in older builds);
otherwise false. ``result_truncated`` when
OpenHands' "Observation truncated" marker is present. Duration from the two
timestamps. ``call_tool_mcp`` actions are ``tool_kind`` mcp (server unknown).
Token sizes of arguments and results come from the offline tokenizer
(``tokens.count_tokens``, labelled with its method).

Session: ``openhands:<file stem>``. Outcome: ``capped`` when an error or the
agent state's reason says a limit was hit (maximum iterations or budget),
``error`` when the agent ended in the error state, ``success`` when the agent
called ``finish``, else ``unknown``.

Problems: the document as a whole — ``invalid-utf8``, ``invalid-json``,
``wrong-shape`` (the document is not a list). Events that cannot be decoded
are passed over and reported once per file as an ``invalid-event`` problem on
line 0 (the file), so the rest of the trajectory still counts. Skip rule:
``no-events`` (an empty list).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest.base import Line, ParseResult, Problem, check_utf8, mcp_answer_text, result_features, sha256_hex, utc_naive
from tokaudit.ingest.skeleton import args_skeleton, args_values
from tokaudit.ingest.tokens import count_tokens

FORMAT = "openhands"
AGENT = "openhands"
FILE_PATTERNS = ("*.json",)  # names picked up when walking a folder
WHOLE_FILE = True  # one JSON document per file

MAX_TOKENS = 10**15  # keeps sums inside int64
MAX_NAME_CHARS = 256  # tool names and models are written by the log: bound what is kept
Tokens = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
# ``created`` epoch seconds outside 2001..2096 are not a response time (some proxies write 0).
EPOCH_RANGE = (1e9, 4e9)

TRUNCATION_MARKER = "Observation truncated"
# Phrases of the errors OpenHands raises when a run hits its iteration or budget limit.
_CAP_PHRASES = ("maximum iteration", "max iteration", "maximum budget", "budget exceeded", "max_iterations", "max_budget")
_EPOCH = datetime(1970, 1, 1)


# --- what is decoded from an event ------------------------------------------------------------


class PromptDetails(Struct):
    cached_tokens: Tokens | None = None


class CompletionDetails(Struct):
    reasoning_tokens: Tokens | None = None


class Usage(Struct):
    prompt_tokens: Tokens = 0
    completion_tokens: Tokens = 0
    prompt_tokens_details: PromptDetails | None = None
    completion_tokens_details: CompletionDetails | None = None
    cache_creation_input_tokens: Tokens | None = None
    cache_read_input_tokens: Tokens | None = None


class Function(Struct):
    name: str | None = None
    arguments: Raw = Raw(b"null")  # a JSON string holding the arguments object, as the model wrote it


class ToolCall(Struct):
    id: str | None = None
    function: Function | None = None


class Message(Struct):
    tool_calls: list[ToolCall] | None = None


class Choice(Struct):
    finish_reason: str | None = None
    message: Message | None = None


class ModelResponse(Struct):
    id: str | None = None
    model: str | None = None
    created: int | float | None = None
    usage: Usage | None = None
    choices: list[Choice] | None = None


class ToolCallMetadata(Struct):
    function_name: str | None = None
    tool_call_id: str | None = None
    model_response: ModelResponse | None = None
    total_calls_in_response: int | None = None


class AccumulatedUsage(Struct):
    model: str | None = None
    prompt_tokens: Tokens = 0
    completion_tokens: Tokens = 0
    cache_read_tokens: Tokens = 0
    cache_write_tokens: Tokens = 0


class LlmMetrics(Struct):
    accumulated_token_usage: AccumulatedUsage | None = None


class Event(Struct):
    id: int | None = None
    timestamp: datetime | None = None
    source: str | None = None
    action: str | None = None
    observation: str | None = None
    cause: int | None = None
    content: str | None = None
    extras: Raw = Raw(b"null")
    success: bool | None = None
    tool_call_metadata: ToolCallMetadata | None = None
    llm_metrics: LlmMetrics | None = None


class CmdMetadata(Struct):
    exit_code: int | None = None


class Extras(Struct):
    agent_state: str | None = None
    reason: str | None = None
    metadata: CmdMetadata | None = None
    exit_code: int | None = None  # before 0.2x command observations carried it here


_event = msgspec.json.Decoder(Event)
_extras = msgspec.json.Decoder(Extras)
_raw_list = msgspec.json.Decoder(list[Raw])
_any = msgspec.json.Decoder()


def default_roots() -> list[Path]:
    """OpenHands has no fixed trajectory folder (``save_trajectory_path`` is per run)."""
    return []


# --- sniffing -----------------------------------------------------------------------------------


def _is_event(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and type(obj.get("id")) is int
        and isinstance(obj.get("source"), str)
        and isinstance(obj.get("timestamp"), str)
        and ("action" in obj or "observation" in obj)
    )


def sniff(head: list[Any]) -> bool:
    """True when the file's first JSON value is a list of OpenHands events (a compact trajectory)."""
    first = head[0] if head else None
    return isinstance(first, list) and bool(first) and all(_is_event(e) for e in first[:5])


# Events are serialised id, [sequence,] timestamp, source first, whatever the indentation.
_PREFIX = re.compile(
    rb'^\[\s*\{\s*"id"\s*:\s*[0-9]+\s*,\s*(?:"sequence"\s*:\s*[0-9]+\s*,\s*)?'
    rb'"timestamp"\s*:\s*"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]*"\s*,\s*"source"\s*:\s*"[a-z_]+"'
)


def sniff_prefix(first: bytes) -> bool:
    """True when the first bytes open a list whose first object starts like an OpenHands event."""
    return bool(_PREFIX.match(first))


# --- the event walk (shared with openhands_eval) -------------------------------------------------


@dataclass
class Walk:
    """What one list of events says: calls per response, tool calls, time span, outcome."""

    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # call_key -> llm_calls row
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool_call_id -> tool_calls row
    models: dict[str, str] = field(default_factory=dict)  # response id -> model that served it
    created: dict[str, datetime] = field(default_factory=dict)  # response id -> its UTC time
    started: datetime | None = None
    ended: datetime | None = None
    finished: bool = False
    error_state: bool = False
    capped: bool = False
    accumulated: AccumulatedUsage | None = None  # the last cumulative snapshot

    @property
    def outcome(self) -> str:
        if self.capped:
            return "capped"
        if self.error_state:
            return "error"
        return "success" if self.finished else "unknown"


def decode_events(raw_events: Sequence[Raw]) -> tuple[list[Event], int, str | None]:
    """Decode each event on its own: a malformed event is passed over (and counted), not the whole list.

    Returns the events, how many could not be decoded, and why the first one could not.
    """
    events: list[Event] = []
    bad, first_bad = 0, None
    for index, raw in enumerate(raw_events):
        try:
            events.append(_event.decode(raw))
        except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
            bad += 1
            if first_bad is None:
                first_bad = f"event {index}: {exc}"
    return events, bad, first_bad


def _created(response: ModelResponse | None) -> datetime | None:
    if response is None or response.created is None:
        return None
    if not EPOCH_RANGE[0] <= response.created <= EPOCH_RANGE[1]:
        return None
    return _EPOCH + timedelta(seconds=response.created)


def local_offset(events: Sequence[Event]) -> timedelta:
    """The zone offset of the events' naive local timestamps, from their responses' UTC ``created``.

    Each action is logged just after its response arrives, so (event time −
    created) is the offset plus a few seconds of latency; the most common value
    rounded to 15 minutes is the offset (zones are whole quarter hours).
    """
    counts: Counter[int] = Counter()
    for ev in events:
        tcm = ev.tool_call_metadata
        created = _created(tcm.model_response) if tcm else None
        if ev.action is None or created is None or ev.timestamp is None or ev.timestamp.tzinfo is not None:
            continue
        quarters = round((ev.timestamp - created) / timedelta(minutes=15))
        if abs(quarters) <= 14 * 4:
            counts[quarters] += 1
    if not counts:
        return timedelta(0)
    quarters = max(counts, key=lambda q: (counts[q], -abs(q)))
    return timedelta(minutes=15 * quarters)


def _event_utc(ts: datetime | None, offset: timedelta) -> datetime | None:
    if ts is None:
        return None
    if ts.tzinfo is not None:
        return utc_naive(ts)
    try:
        return ts - offset
    except OverflowError:
        return ts  # year 1 or 9999: nothing sensible to correct


def clip(text: str | None) -> str | None:
    """A name or id as stored: bounded. (msgspec rejects lone-surrogate escapes, so text is always encodable.)"""
    return None if text is None else text[:MAX_NAME_CHARS]


def usage_row(
    call_key: str,
    session_id: str,
    line_no: int,
    ts: datetime | None,
    model: str | None,
    *,
    prompt: int,
    completion: int,
    cache_read: int,
    cache_write: int,
    reasoning: int | None = None,
    stop_reason: str | None = None,
    context_window: int | None = None,
) -> dict[str, Any]:
    """An llm_calls row from LiteLLM-style inclusive counts (prompt includes both cache parts)."""
    cache_read = min(cache_read, prompt)
    cache_write = min(cache_write, prompt - cache_read)
    return {
        "call_key": call_key,
        "session_id": session_id,
        "line_no": line_no,
        "ts_utc": ts,
        "provider": None,  # LiteLLM prefixes name the API shape, not who served the call
        "model": clip(model),
        "message_id": None,
        "request_id": None,
        "input_tokens": prompt - cache_read - cache_write,
        "cache_read_tokens": cache_read,
        "cache_write_5m_tokens": cache_write,
        "cache_write_1h_tokens": 0,
        "output_tokens": completion,
        "reasoning_tokens": None if reasoning is None else min(reasoning, completion),
        "web_search_requests": 0,
        "context_window_tokens": context_window,
        "usage_source": "reported",
        "output_is_lower_bound": False,
        "cache_ttl_known": cache_write == 0,
        "is_sidechain": False,
        "is_aggregate": False,
        "stop_reason": clip(stop_reason),
        "service_tier": None,
        "speed": None,
        "aggregate_calls": None,
        "reported_cost_usd": None,
    }


def response_key(response: ModelResponse) -> str:
    """``openhands:<response id>``; without an id, a hash of what identifies the response."""
    if response.id:
        return f"openhands:{clip(response.id)}"
    u = response.usage or Usage()
    material = f"{response.model}|{response.created}|{u.prompt_tokens}|{u.completion_tokens}|{msgspec.json.encode(u).decode()}"
    return "openhands:" + hashlib.sha256(material.encode()).hexdigest()[:32]


def _response_row(response: ModelResponse, session_id: str, line_no: int, ts: datetime | None) -> dict[str, Any] | None:
    u = response.usage
    if u is None:
        return None
    details = u.prompt_tokens_details
    cache_read = details.cached_tokens if details and details.cached_tokens is not None else u.cache_read_input_tokens or 0
    reasoning = u.completion_tokens_details.reasoning_tokens if u.completion_tokens_details else None
    choice = response.choices[0] if response.choices else None
    return usage_row(
        response_key(response),
        session_id,
        line_no,
        ts,
        response.model,
        prompt=u.prompt_tokens,
        completion=u.completion_tokens,
        cache_read=cache_read,
        cache_write=u.cache_creation_input_tokens or 0,
        reasoning=reasoning,
        stop_reason=choice.finish_reason if choice else None,
    )


def _arguments(response: ModelResponse | None, tool_call_id: str) -> bytes | None:
    """The arguments the model wrote for ``tool_call_id``, as the text it produced (None if not logged)."""
    for choice in (response.choices or []) if response else []:
        for call in (choice.message.tool_calls or []) if choice.message else []:
            if call.id == tool_call_id and call.function is not None:
                raw = bytes(call.function.arguments)
                if raw == b"null":
                    return None
                value = _any.decode(raw)
                return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else raw
    return None


def _extras_of(ev: Event) -> Extras:
    try:
        return _extras.decode(ev.extras)
    except msgspec.DecodeError:
        return Extras()  # extras only refine the error flag and outcome


class _ToolResult(Struct):
    isError: bool | None = None


_call_tool_result = msgspec.json.Decoder(_ToolResult)


def _observation_error(ev: Event, extras: Extras) -> bool:
    if ev.observation == "error":
        return True
    if ev.observation == "mcp" and isinstance(ev.content, str) and "isError" in ev.content:
        # An MCP observation's content is the server's CallToolResult as JSON: its own isError flag, not wording.
        try:
            return bool(_call_tool_result.decode(ev.content).isError)
        except msgspec.DecodeError:
            return False
    if ev.success is not None:
        return not ev.success
    code = extras.metadata.exit_code if extras.metadata and extras.metadata.exit_code is not None else extras.exit_code
    return code is not None and code != 0


def says_capped(text: str | None) -> bool:
    lowered = (text or "").lower()
    return any(p in lowered for p in _CAP_PHRASES)


def walk_events(events: Sequence[Event], *, session_id: str, line_no: int, id_prefix: str = "") -> Walk:
    """Calls, tool calls, time span and outcome of one session's events (see module docstring).

    ``id_prefix`` namespaces tool-call ids when one file holds several sessions.
    """
    walk = Walk()
    offset = local_offset(events)
    by_action: dict[int, str] = {}  # action event id -> tool_call_id key, for the observation join
    for ev in events:
        ts = _event_utc(ev.timestamp, offset)
        if ts is not None:
            walk.started = ts if walk.started is None or ts < walk.started else walk.started
            walk.ended = ts if walk.ended is None or ts > walk.ended else walk.ended
        if ev.llm_metrics is not None and ev.llm_metrics.accumulated_token_usage is not None:
            walk.accumulated = ev.llm_metrics.accumulated_token_usage
        tcm = ev.tool_call_metadata
        response = tcm.model_response if tcm else None
        if response is not None:
            _add_response(walk, response, session_id, line_no, ts)
        if ev.action is not None:
            if ev.action == "finish":
                walk.finished = True
            if tcm is not None and tcm.tool_call_id:
                key = _tool_call(walk, ev, tcm, session_id, line_no, ts, id_prefix)
                if ev.id is not None:
                    by_action[ev.id] = key
        elif ev.observation is not None:
            extras = _extras_of(ev) if ev.observation in ("run", "run_ipython", "agent_state_changed", "error") else Extras()
            if ev.observation == "agent_state_changed" and extras.agent_state:
                walk.error_state = extras.agent_state == "error"
                walk.capped = walk.capped or says_capped(extras.reason)
            if ev.observation == "error":
                walk.capped = walk.capped or says_capped(ev.content)
            if ev.cause is not None and ev.cause in by_action:
                _tool_result(walk, by_action[ev.cause], ev, extras, session_id, line_no, ts)
    return walk


def _add_response(walk: Walk, response: ModelResponse, session_id: str, line_no: int, ts: datetime | None) -> None:
    created = _created(response)
    key = response_key(response)
    if response.id and response.model:
        walk.models.setdefault(response.id, response.model)
    if response.id and (created or ts):
        walk.created.setdefault(response.id, created or ts)
    if key in walk.calls:
        return  # the same response repeated on another action or its observation
    row = _response_row(response, session_id, line_no, created or ts)
    if row is not None:
        walk.calls[key] = row


def _tool_call(
    walk: Walk, ev: Event, tcm: ToolCallMetadata, session_id: str, line_no: int, ts: datetime | None, id_prefix: str
) -> str:
    protocol_id = clip(tcm.tool_call_id)
    key = id_prefix + protocol_id
    if key in walk.tools:
        key = f"{key}#{ev.id}"  # an id the model reused: keep both calls
    args = _arguments(tcm.model_response, tcm.tool_call_id)
    name = clip(tcm.function_name) or clip(ev.action)
    is_mcp = ev.action == "call_tool_mcp"
    args_tokens, args_method = count_tokens(args.decode("utf-8", "replace")) if args is not None else (None, None)
    walk.tools[key] = {
        "tool_call_id": key,
        "session_id": session_id,
        "call_key": response_key(tcm.model_response) if tcm.model_response else None,
        "line_no": line_no,
        "ts_utc": ts,
        "tool_name": name,
        "tool_kind": "mcp" if is_mcp else "builtin",
        "mcp_server": None,
        "mcp_tool": name if is_mcp else None,
        "args_bytes": len(args) if args is not None else None,
        "args_sha256": sha256_hex(args) if args is not None else None,
        "args_skeleton": args_skeleton(args) if args else None,
        "args_values": args_values(args) if args else None,
        "args_tokens": args_tokens,
        "args_tokens_method": args_method,
        "protocol_call_id": protocol_id,
    }
    return key


def _tool_result(walk: Walk, key: str, ev: Event, extras: Extras, session_id: str, line_no: int, ts: datetime | None) -> None:
    row = walk.tools[key]
    if row.get("result_bytes") is not None:
        return  # a second observation for the same action: the first answered it
    text = ev.content or ""
    data = text.encode("utf-8")
    tokens, method = count_tokens(text)
    row.update(
        {
            "result_line_no": line_no,
            "result_ts_utc": ts,
            "result_bytes": len(data),
            "result_sha256": sha256_hex(data),
            # An MCP observation is the server's CallToolResult as JSON: its features are the answer's own text's.
            **result_features((mcp_answer_text(data) if ev.observation == "mcp" else None) or data),
            "result_content_types": "text",
            "result_truncated": TRUNCATION_MARKER in text,
            "is_error": _observation_error(ev, extras),
            "result_tokens": tokens,
            "result_tokens_method": method,
        }
    )
    if row["ts_utc"] is not None and ts is not None:
        row["duration_ms"] = max(0, round((ts - row["ts_utc"]).total_seconds() * 1000))
        row["duration_method"] = "timestamps"


def remainder_row(
    accumulated: AccumulatedUsage | None, calls: Iterable[dict[str, Any]], session_id: str, line_no: int, ts: datetime | None
) -> dict[str, Any] | None:
    """The usage a cumulative total reports beyond the per-call rows, as one aggregate row (None if none)."""
    if accumulated is None:
        return None
    rows = list(calls)
    prompt = sum(r["input_tokens"] + r["cache_read_tokens"] + r["cache_write_5m_tokens"] for r in rows)
    completion = sum(r["output_tokens"] for r in rows)
    extra_prompt = accumulated.prompt_tokens - prompt
    extra_completion = accumulated.completion_tokens - completion
    if extra_prompt <= 0 and extra_completion <= 0:
        return None
    row = usage_row(
        f"openhands:unattributed:{session_id}",
        session_id,
        line_no,
        ts,
        accumulated.model if accumulated.model and accumulated.model != "default" else None,
        prompt=max(0, extra_prompt),
        completion=max(0, extra_completion),
        cache_read=max(0, accumulated.cache_read_tokens - sum(r["cache_read_tokens"] for r in rows)),
        cache_write=max(0, accumulated.cache_write_tokens - sum(r["cache_write_5m_tokens"] for r in rows)),
    )
    row["is_aggregate"] = True
    return row


# --- the trajectory format ----------------------------------------------------------------------


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse an OpenHands trajectory document into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    for line in lines:
        try:
            check_utf8(line.data)
            raw_events = _raw_list.decode(line.data)
        except msgspec.ValidationError:
            result.problem(line, "wrong-shape", "not an OpenHands trajectory: the document is not a list of events")
            continue
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        if not raw_events:
            result.skipped["no-events"] += 1
            continue
        _use_trajectory(result, line, raw_events, path)
        result.lines_ok += 1
    return result


def _use_trajectory(result: ParseResult, line: Line, raw_events: list[Raw], path: str) -> None:
    session_id = f"openhands:{clip(Path(path).stem)}"
    events, bad, first_bad = decode_events(raw_events)
    decoded = walk_events(events, session_id=session_id, line_no=line.line_no)
    if bad:
        message = f"{bad} of {len(raw_events)} events could not be used; first: {first_bad}"
        result.problems.append(Problem(0, 0, "invalid-event", message[:500], None))
    result.add_session(
        {
            "session_id": session_id,
            "agent": AGENT,
            "task_label": None,
            "outcome": decoded.outcome,
            "started_at_utc": decoded.started,
            "ended_at_utc": decoded.ended,
        }
    )
    for row in decoded.calls.values():
        result.add_llm_call(row)
    extra = remainder_row(decoded.accumulated, decoded.calls.values(), session_id, line.line_no, decoded.ended)
    if extra is not None:
        result.add_llm_call(extra)
    for row in decoded.tools.values():
        result.add_tool_call(row)
