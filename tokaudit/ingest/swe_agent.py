"""SWE-agent trajectories: one ``<instance_id>.traj`` JSON document per run of one instance.

Location: ``trajectories/<user>/<run>/<instance_id>.traj`` (v0.x) or
``.../<run>/<instance_id>/<instance_id>.traj`` (v1) under the directory
SWE-agent ran in; no default folder (``default_roots()`` is empty).

Shape: ``{trajectory[{action, observation, response, thought, state,
execution_time?, query?, extra_info?}], history[{role, content, agent,
message_type?, action?, tool_calls?, tool_call_ids?, is_demo?}],
info{exit_status, submission, model_stats, swe_agent_version?},
replay_config?, environment?}``, pretty-printed. A RetryAgent run adds
``attempts[]`` (each a whole trajectory document) and sets ``info.model_stats``
to the total over attempts and reviewer. Demonstration files hold only
``history``. The document is the unit of line accounting (``WHOLE_FILE``).

Usage: there is none per step. ``info.model_stats{instance_cost,
tokens_sent, tokens_received, api_calls[, total_cost]}`` is the run's total and
becomes ONE llm_calls row with ``is_aggregate`` true and ``aggregate_calls ←
api_calls``: ``input_tokens ← tokens_sent``; ``output_tokens ←
tokens_received``; the cache split is not logged, so the cache columns are 0
and ``cache_ttl_known`` is false (all input is priced as uncached, an upper
bound when the provider cached); ``reasoning_tokens`` NULL; ``usage_source``
``reported``; ``reported_cost_usd ← instance_cost``, except 0 for a run that
used tokens (SWE-agent writes 0 when LiteLLM cannot price the model: unknown,
not free). ``total_cost`` is never used: in older files it is the whole batch's
running total. SWE-agent v1 counts tokens itself with LiteLLM's
``token_counter`` (prompt messages; the reply's *text* only), so when the run
used function calling (history messages with ``tool_calls``) the tool-call
arguments are missing from ``tokens_received`` and the row is flagged
``output_is_lower_bound``. A run whose stats are all zero (a replayed
demonstration) made no model call: no row. Per-step numbers are never made up.

RetryAgent files: each attempt gets its own aggregate row (keyed like the
attempt's own ``attempt_<n>/<id>.traj`` file, so ingesting both counts each
attempt once) and the rest of the total (the reviewer's calls) one more.

Dedup key: ``swe-agent:`` + hash of (model_stats, and every step's action,
observation and response): a copy of the same run in another file counts once,
two runs never collide. ``model`` comes from ``replay_config`` (a JSON string
in v1, an object in some files): ``agent.model.name`` (or ``model_name``, or
the first of ``agent.agent_configs``); NULL in files without one. No
timestamps exist in the format: ``ts_utc`` and the session's span are NULL.

Tool calls: every trajectory step with a non-empty ``action`` is one call
(steps without one are model replies that failed to parse). The name is the
function-call name when the matching history message has ``tool_calls``
(function calling), else the first word of the command; ``tool_call_id`` is
the step's number (five digits) and the function call's id, else ``step``
(``00007-call_x1``, ``00008-step``; ``a<kk>:`` prefixed per attempt): the format
has no timestamps, so the ids keep the calls in step order wherever they are sorted.
Arguments: the function call's JSON arguments, else the command text. Result:
the step's ``observation`` (the raw output; SWE-agent may truncate it before the
model sees it). ``duration_ms`` ← ``execution_time`` (``reported``); ``is_error``
NULL (exit codes are not logged). Token sizes come from the offline tokenizer.
History-only files (demonstrations) give their tool calls from the history's
action messages and the observations that follow them.

Session: ``swe-agent:<run>/<instance_id>``; ``<instance_id>`` from
``replay_config.problem_statement.id`` else the file stem; ``<run>`` from the
last part of ``replay_config.output_dir`` else the nearest parent folder that
is neither the instance id nor ``attempt_<n>``. ``task_label`` = instance id;
``agent_version`` = ``info.swe_agent_version``.

Outcome from ``info.exit_status``: ``submitted`` → ``success``;
``exit_cost`` / ``exit_context`` / ``exit_total_execution_time`` (a cost,
context or time limit) → ``capped``; any other ``exit_*`` and ``early_exit``
(format, API, environment errors, timeouts, forfeits) → ``error``;
``submitted (<status>)`` (autosubmitted after <status>) → that status's
outcome; none or anything else → ``unknown``.

Problems: the document — ``invalid-utf8``, ``invalid-json``, ``wrong-shape``
(not a trajectory object). Parts that cannot be decoded (a step, a history
message, ``model_stats``) are passed over and reported once per file as a
line-0 (file) problem ``invalid-part``; the rest still counts. Skip rule:
``no-content`` (neither trajectory, history nor model_stats).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePath
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest.base import Line, ParseResult, Problem, check_utf8, result_features, sha256_hex
from tokaudit.ingest.skeleton import args_skeleton, args_values
from tokaudit.ingest.tokens import count_tokens

FORMAT = "swe-agent"
AGENT = "swe-agent"
FILE_PATTERNS = ("*.traj",)
WHOLE_FILE = True

MAX_TOKENS = 10**15  # keeps sums inside int64
MAX_NAME_CHARS = 256
MAX_COMMAND_WORD = 64
Tokens = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
Cost = Annotated[float, Meta(ge=0, le=1e9)]
MAX_SECONDS = 1e8
_COST_QUANTUM = Decimal(1).scaleb(-18)  # the store keeps 18 decimal places

_CAPPED = frozenset({"exit_cost", "exit_context", "exit_total_execution_time"})
_TOP_KEYS = frozenset({"trajectory", "history", "info", "replay_config", "environment", "attempts"})


class ModelStats(Struct):
    instance_cost: Cost | None = None
    tokens_sent: Tokens = 0
    tokens_received: Tokens = 0
    api_calls: Tokens = 0


class Info(Struct):
    # Loosely typed: an odd exit status or version must not cost the run its model_stats.
    exit_status: Any = None
    model_stats: Raw = Raw(b"null")
    swe_agent_version: Any = None


class Step(Struct):
    action: str | None = None
    observation: str | None = None
    response: str | None = None
    execution_time: Any = None  # seconds; checked where used, so an odd value costs only the duration


class HistoryItem(Struct):
    role: str | None = None
    content: Raw = Raw(b"null")  # a string, or a list of content parts (multimodal)
    action: str | None = None
    message_type: str | None = None
    tool_calls: Raw = Raw(b"null")  # a list, or (in some demonstrations) that list as a JSON string
    tool_call_ids: list[str] | None = None
    is_demo: bool | None = None


class Function(Struct):
    name: str | None = None
    arguments: Raw = Raw(b"null")


class FunctionCall(Struct):
    id: str | None = None
    function: Function | None = None


class Document(Struct):
    trajectory: list[Raw] | None = None
    history: list[Raw] | None = None
    info: Raw = Raw(b"null")
    replay_config: Raw = Raw(b"null")
    attempts: list[Raw] | None = None


_document = msgspec.json.Decoder(Document)
_info = msgspec.json.Decoder(Info)
_stats = msgspec.json.Decoder(ModelStats)
_step = msgspec.json.Decoder(Step)
_history_item = msgspec.json.Decoder(HistoryItem)
_calls = msgspec.json.Decoder(list[FunctionCall])
_any = msgspec.json.Decoder()


def default_roots() -> list[Any]:
    """SWE-agent writes trajectories under the directory it ran in: no default folder."""
    return []


# --- sniffing -----------------------------------------------------------------------------------


def sniff(head: list[Any]) -> bool:
    """True when the first JSON value is a (compact) SWE-agent trajectory document."""
    first = head[0] if head else None
    if not isinstance(first, dict) or not first or not set(first) <= _TOP_KEYS:
        return False
    info, steps, history = first.get("info"), first.get("trajectory"), first.get("history")
    if isinstance(info, dict) and ("model_stats" in info or "exit_status" in info):
        return True
    if isinstance(steps, list) and steps and isinstance(steps[0], dict) and "action" in steps[0] and "observation" in steps[0]:
        return True
    return isinstance(history, list) and bool(history) and isinstance(history[0], dict) and {"role", "agent"} <= set(history[0])


# v0.x: {"environment": "...", "trajectory": [...]; v1: {"trajectory": [{"action": ... or []; RetryAgent:
# {"attempts": [{"trajectory": ...; demonstrations: {"history": [{"role": "system", "content": ...
_ENV = rb'(?:"environment"\s*:\s*"[^"]*"\s*,\s*)?'
_PREFIX = re.compile(
    rb'^\{\s*' + _ENV + rb'(?:"trajectory"\s*:\s*\[\s*(?:\]|\{\s*"action"\s*:)'
    rb'|"attempts"\s*:\s*\[\s*\{\s*' + _ENV + rb'"trajectory"\s*:'
    rb'|"history"\s*:\s*\[\s*\{\s*"role"\s*:\s*"system"\s*,\s*"content"\s*:)'
)


def sniff_prefix(first: bytes) -> bool:
    """True when the first bytes open a SWE-agent trajectory object (any generation, or a demonstration)."""
    return bool(_PREFIX.match(first))


# --- parsing ------------------------------------------------------------------------------------


@dataclass
class _Defects:
    """Parts of the document that could not be decoded: counted, the first one described."""

    count: int = 0
    first: str | None = None

    def add(self, where: str, exc: msgspec.DecodeError) -> None:
        self.count += 1
        if self.first is None:
            self.first = f"{where}: {exc}"


@dataclass
class _Run:
    """One agent run's parts: a whole file, or one attempt of a RetryAgent file."""

    steps: list[tuple[int, Step]] = field(default_factory=list)  # (1-based position in the trajectory, step)
    history: list[HistoryItem] = field(default_factory=list)
    info: Info = field(default_factory=Info)
    stats: ModelStats | None = None


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse a SWE-agent ``.traj`` document into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    for line in lines:
        try:
            check_utf8(line.data)
            doc = _document.decode(line.data)
        except msgspec.ValidationError as exc:
            result.problem(line, "wrong-shape", f"not a SWE-agent trajectory: {exc}")
            continue
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        defects = _Defects()
        run = _decode_run(doc.trajectory, doc.history, doc.info, defects, "")
        attempts = [_decode_attempt(raw, defects, k) for k, raw in enumerate(doc.attempts or [])]
        if not run.steps and not run.history and run.stats is None and not attempts:
            result.skipped["no-content"] += 1
            continue
        _use_document(result, line, doc, run, [a for a in attempts if a is not None], path)
        if defects.count:
            message = f"{defects.count} parts of the trajectory could not be used; first: {defects.first}"
            result.problems.append(Problem(0, 0, "invalid-part", message[:500], None))
        result.lines_ok += 1
    return result


def _decode_run(steps: list[Raw] | None, history: list[Raw] | None, info_raw: Raw, defects: _Defects, where: str) -> _Run:
    run = _Run()
    for i, raw in enumerate(steps or []):
        try:
            run.steps.append((i + 1, _step.decode(raw)))
        except msgspec.DecodeError as exc:
            defects.add(f"{where}trajectory[{i}]", exc)
    for i, raw in enumerate(history or []):
        try:
            run.history.append(_history_item.decode(raw))
        except msgspec.DecodeError as exc:
            defects.add(f"{where}history[{i}]", exc)
    if bytes(info_raw) != b"null":
        try:
            run.info = _info.decode(info_raw)
        except msgspec.DecodeError as exc:
            defects.add(f"{where}info", exc)
    if bytes(run.info.model_stats) != b"null":
        try:
            run.stats = _stats.decode(run.info.model_stats)
        except msgspec.DecodeError as exc:
            defects.add(f"{where}info.model_stats", exc)
    return run


def _decode_attempt(raw: Raw, defects: _Defects, k: int) -> _Run | None:
    try:
        doc = _document.decode(raw)
    except msgspec.DecodeError as exc:
        defects.add(f"attempts[{k}]", exc)
        return None
    return _decode_run(doc.trajectory, doc.history, doc.info, defects, f"attempts[{k}].")


def _replay_config(raw: Raw) -> dict[str, Any]:
    """``replay_config`` as a dict: v1 stores it as a JSON string, some files as an object."""
    try:
        value = _any.decode(raw)
        if isinstance(value, str):
            value = _any.decode(value)
    except msgspec.DecodeError:
        return {}  # only the model name and ids are taken from it
    return value if isinstance(value, dict) else {}


def _dig(obj: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and len(obj) > key else None
        else:
            obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _clip(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """A name or id as stored: bounded. (msgspec rejects lone-surrogate escapes, so text is always encodable.)"""
    return text[:limit]


def _text(value: Any) -> str | None:
    return _clip(value) if isinstance(value, str) and value else None


def _model(config: dict[str, Any]) -> str | None:
    for path in (("agent", "model", "name"), ("agent", "model", "model_name"), ("agent", "agent_configs", 0, "model", "name")):
        name = _text(_dig(config, *path))
        if name:
            return name
    return None


def _run_name(config: dict[str, Any], path: str, instance: str) -> str:
    out = _text(_dig(config, "output_dir"))
    if out:
        return PurePath(out).name
    for parent in PurePath(path).parents:
        if parent.name and parent.name != instance and not re.fullmatch(r"attempt_[0-9]+", parent.name):
            return _clip(parent.name)
    return ""


def outcome(exit_status: str | None) -> str:
    """``info.exit_status`` → success / capped / error / unknown (see module docstring).

    Examples:
        >>> outcome("submitted"), outcome("submitted (exit_cost)"), outcome("exit_format"), outcome(None)
        ('success', 'capped', 'error', 'unknown')
    """
    status = (exit_status or "").strip()
    inner = re.fullmatch(r"submitted \((.+)\)", status)
    if inner:
        status = inner.group(1).strip()
    if status == "submitted":
        return "success"
    if status in _CAPPED:
        return "capped"
    if status.startswith("exit_") or status == "early_exit":
        return "error"
    return "unknown"


def _digest(stats: ModelStats, steps: Sequence[tuple[int, Step]]) -> str:
    h = hashlib.sha256(f"{stats.tokens_sent}|{stats.tokens_received}|{stats.api_calls}|{stats.instance_cost!r}".encode())
    for _, step in steps:
        for part in (step.action, step.observation, step.response):
            h.update(b"\x00" + (part or "").encode("utf-8", "surrogatepass"))
        h.update(b"\x01")
    return h.hexdigest()[:32]


def _uses_function_calls(history: Sequence[HistoryItem]) -> bool:
    return any(h.role == "assistant" and bytes(h.tool_calls) not in (b"null", b"[]") for h in history)


def _cost(value: float | None, tokens: int) -> Decimal | None:
    if value is None or (value == 0 and tokens > 0):
        return None  # 0 for a run that used tokens: the model was not priced
    return Decimal(repr(float(value))).quantize(_COST_QUANTUM)


def _aggregate_row(
    call_key: str, session_id: str, line_no: int, model: str | None, stats: ModelStats, lower_bound: bool
) -> dict[str, Any] | None:
    if stats.tokens_sent == 0 and stats.tokens_received == 0 and stats.api_calls == 0:
        return None  # no model was called (a replayed demonstration)
    return {
        "call_key": call_key,
        "session_id": session_id,
        "line_no": line_no,
        "ts_utc": None,
        "provider": None,
        "model": model,
        "message_id": None,
        "request_id": None,
        "input_tokens": stats.tokens_sent,
        "cache_read_tokens": 0,
        "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": 0,
        "output_tokens": stats.tokens_received,
        "reasoning_tokens": None,
        "web_search_requests": 0,
        "context_window_tokens": None,
        "usage_source": "reported",
        "output_is_lower_bound": lower_bound,
        "cache_ttl_known": False,
        "is_sidechain": False,
        "is_aggregate": True,
        "stop_reason": None,
        "service_tier": None,
        "speed": None,
        "aggregate_calls": stats.api_calls,
        "reported_cost_usd": _cost(stats.instance_cost, stats.tokens_sent + stats.tokens_received),
    }


def _use_document(result: ParseResult, line: Line, doc: Document, run: _Run, attempts: list[_Run], path: str) -> None:
    config = _replay_config(doc.replay_config)
    instance = _text(_dig(config, "problem_statement", "id")) or _clip(PurePath(path).stem)
    run_name = _run_name(config, path, instance)
    session_id = f"swe-agent:{run_name}/{instance}" if run_name else f"swe-agent:{instance}"
    model = _model(config)
    result.add_session(
        {
            "session_id": session_id,
            "agent": AGENT,
            "task_label": instance,
            "outcome": outcome(run.info.exit_status if isinstance(run.info.exit_status, str) else None),
            "agent_version": _text(run.info.swe_agent_version),
            "started_at_utc": None,
            "ended_at_utc": None,
        }
    )
    parts = attempts or [run]
    for k, part in enumerate(parts):
        key = None
        if part.stats is not None:
            key = f"swe-agent:{_digest(part.stats, part.steps)}"
            row = _aggregate_row(key, session_id, line.line_no, model, part.stats, _uses_function_calls(part.history))
            if row is not None:
                result.add_llm_call(row)
            else:
                key = None
        prefix = f"a{k:02d}:" if attempts else ""
        if part.steps:
            _step_tool_calls(result, part, session_id, line.line_no, key, prefix)
        else:
            _history_tool_calls(result, part.history, session_id, line.line_no, key, prefix)
    if attempts and run.stats is not None:
        _reviewer_row(result, run.stats, [a.stats for a in attempts if a.stats], session_id, line.line_no, model, parts)


def _reviewer_row(
    result: ParseResult, total: ModelStats, parts: list[ModelStats], session_id: str, line_no: int, model: str | None, runs: list[_Run]
) -> None:
    """A RetryAgent total minus its attempts: the reviewer's (or chooser's) calls, as one more aggregate."""
    # Float costs summed back leave dust (1e-17): round well inside the store's 18 places.
    cost = round(max(0.0, (total.instance_cost or 0) - sum(p.instance_cost or 0 for p in parts)), 12)
    rest = ModelStats(
        instance_cost=cost,
        tokens_sent=max(0, total.tokens_sent - sum(p.tokens_sent for p in parts)),
        tokens_received=max(0, total.tokens_received - sum(p.tokens_received for p in parts)),
        api_calls=max(0, total.api_calls - sum(p.api_calls for p in parts)),
    )
    key = f"swe-agent:{_digest(total, [s for r in runs for s in r.steps])}:review"
    row = _aggregate_row(key, session_id, line_no, model, rest, False)
    if row is not None:
        result.add_llm_call(row)


def _command_word(action: str) -> str:
    words = action.strip().split(maxsplit=1)
    return _clip(words[0], MAX_COMMAND_WORD) if words else ""


def _function_calls(item: HistoryItem | None) -> list[FunctionCall]:
    """An action message's function calls (a list, or that list serialised as a string); [] if none."""
    if item is None or bytes(item.tool_calls) in (b"null", b"[]"):
        return []
    try:
        value = _any.decode(item.tool_calls)
        data = value.encode() if isinstance(value, str) else bytes(item.tool_calls)
        return _calls.decode(data)
    except msgspec.DecodeError:
        return []  # unreadable calls only cost the function name: the command word stands in


def _arguments(call: FunctionCall) -> bytes:
    raw = bytes(call.function.arguments) if call.function else b"null"
    if raw == b"null":
        return b""
    value = _any.decode(raw)
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else raw


def _content_text(raw: Raw) -> tuple[str, str]:
    """A history message's text and its content types (``text``, ``image``...)."""
    try:
        value = _any.decode(raw)
    except msgspec.DecodeError:
        return "", "text"
    if isinstance(value, str):
        return value, "text"
    texts, kinds = [], set()
    for part in value if isinstance(value, list) else []:
        if isinstance(part, dict):
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
                kinds.add("text")
            elif isinstance(kind, str):
                kinds.add("image" if kind.startswith("image") else _clip(kind, 32))
    return "".join(texts), ",".join(sorted(kinds)) or "text"


def _tool_row(
    tool_call_id: str, protocol_id: str | None, name: str, args: bytes, session_id: str, line_no: int, call_key: str | None
) -> dict[str, Any]:
    args_tokens, args_method = count_tokens(args.decode("utf-8", "replace"))
    return {
        "tool_call_id": tool_call_id,
        "session_id": session_id,
        "call_key": call_key,
        "line_no": line_no,
        "ts_utc": None,
        "tool_name": _clip(name) or None,
        "tool_kind": "builtin",
        "mcp_server": None,
        "mcp_tool": None,
        "args_bytes": len(args),
        "args_sha256": sha256_hex(args),
        "args_skeleton": args_skeleton(args) if args else None,
        "args_values": args_values(args) if args else None,
        "args_tokens": args_tokens,
        "args_tokens_method": args_method,
        "protocol_call_id": _clip(protocol_id) if protocol_id else None,
    }


def _add_result(row: dict[str, Any], text: str, content_types: str, line_no: int) -> None:
    data = text.encode("utf-8")
    tokens, method = count_tokens(text)
    row.update(
        {
            "result_line_no": line_no,
            "result_bytes": len(data),
            "result_sha256": sha256_hex(data),
            **result_features(data),
            "result_content_types": content_types,
            "result_truncated": None,
            "is_error": None,
            "result_tokens": tokens,
            "result_tokens_method": method,
        }
    )


def _unique(result: ParseResult, key: str, n: int) -> str:
    return key if key not in result.tool_calls else f"{key}#{n}"


def _step_tool_calls(result: ParseResult, run: _Run, session_id: str, line_no: int, call_key: str | None, prefix: str) -> None:
    # Steps and the history's action messages come in the same order; steps the model had to redo
    # (format errors) are in the trajectory only, so a step takes the next message only if it matches.
    actions = [h for h in run.history if h.role == "assistant" and h.action is not None and not h.is_demo]
    pointer = 0
    for n, step in run.steps:
        if not (step.action or "").strip():
            continue
        message = None
        if pointer < len(actions) and actions[pointer].action == step.action:
            message, pointer = actions[pointer], pointer + 1
        calls = _function_calls(message)
        call = calls[0] if len(calls) == 1 else None  # SWE-agent asks for one call per step
        if call is not None and call.function is not None and call.function.name:
            name, args, protocol_id = call.function.name, _arguments(call), call.id
        else:
            name, args, protocol_id = _command_word(step.action), step.action.encode("utf-8", "surrogatepass"), None
        key = _unique(result, f"{prefix}{n:05d}-{_clip(protocol_id) if protocol_id else 'step'}", n)
        row = _tool_row(key, protocol_id, name, args, session_id, line_no, call_key)
        _add_result(row, step.observation or "", "text", line_no)
        seconds = step.execution_time
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds <= MAX_SECONDS:
            row["duration_ms"] = round(seconds * 1000)
            row["duration_method"] = "reported"
        result.add_tool_call(row)


def _history_tool_calls(
    result: ParseResult, history: Sequence[HistoryItem], session_id: str, line_no: int, call_key: str | None, prefix: str
) -> None:
    """Tool calls of a history-only file (a demonstration): action messages and the observations after them."""
    open_calls: dict[str, dict[str, Any]] = {}  # function-call id -> row awaiting its tool message
    last_text_call: dict[str, Any] | None = None  # a command-text action awaiting the next observation
    for n, item in enumerate(history, start=1):
        if item.is_demo:
            continue
        if item.role == "assistant" and item.action is not None and item.action.strip():
            calls = [c for c in _function_calls(item) if c.function is not None and c.function.name]
            for call in calls:
                key = _unique(result, f"{prefix}{n:05d}-{_clip(call.id) if call.id else 'msg'}", n)
                row = _tool_row(key, call.id, call.function.name, _arguments(call), session_id, line_no, call_key)
                result.add_tool_call(row)
                open_calls[call.id or key] = row
            last_text_call = None
            if not calls:
                key = _unique(result, f"{prefix}{n:05d}-msg", n)
                last_text_call = _tool_row(key, None, _command_word(item.action), item.action.encode("utf-8", "surrogatepass"), session_id, line_no, call_key)
                result.add_tool_call(last_text_call)
        elif item.role in ("tool", "user") and (item.tool_call_ids or last_text_call is not None):
            text, kinds = _content_text(item.content)
            for call_id in item.tool_call_ids or []:
                row = open_calls.pop(call_id, None)
                if row is not None:
                    _add_result(row, text, kinds, line_no)
            if not item.tool_call_ids and last_text_call is not None:
                _add_result(last_text_call, text, kinds, line_no)
                last_text_call = None
