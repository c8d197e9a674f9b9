"""OpenHands evaluation output: ``output.jsonl``, one benchmark instance per line.

Location: ``evaluation/evaluation_outputs/outputs/<dataset>/<agent>/<run>/output.jsonl``
under an OpenHands checkout (no default folder: pass the files). The file grows
by one line per finished instance, so it is read as lines and resumed.

Shape: ``{instance_id, test_result, instruction, metadata{llm_config{model},
eval_output_dir, ...}, history[events], metrics{accumulated_cost,
accumulated_token_usage, costs[], response_latencies[], token_usages[]},
error, instance{repo, ...}, report?}``. Lines are large (hundreds of KB): a
line over ``max_line_bytes`` is a ``line-too-long`` problem.

Usage: ``metrics.token_usages[]`` holds one item per model call
``{model, prompt_tokens, completion_tokens, cache_read_tokens,
cache_write_tokens, response_id, context_window?}``; each becomes one row with
the trajectory format's mapping (LiteLLM ``prompt_tokens`` includes both cache
parts): ``input ← prompt − cache_read − cache_write``, ``cache_write_5m ←
cache_write`` (TTL unknown), ``output ← completion``. The model is the one that served the response (the
history's ``model_response.model`` for that id) when the history has it, else
the item's ``model`` (the configured LiteLLM name). ``ts_utc`` is the
response's ``created``, and ``stop_reason`` / ``reasoning_tokens`` its
``finish_reason`` / ``completion_tokens_details.reasoning_tokens``, from the
history (NULL when the history lacks the response).
``metrics.accumulated_token_usage`` and the per-event ``llm_metrics`` are
running totals and are never summed: the accumulated total is only compared
with the rows, and what it reports beyond them becomes one ``is_aggregate`` row
(``openhands:unattributed:<session_id>``). Older outputs without
``token_usages`` fall back to the history's per-response usage (deduplicated
like a trajectory), and with neither, to one aggregate row from
``accumulated_token_usage`` (``aggregate_calls`` = the number of
``response_latencies``, ``reported_cost_usd`` = ``accumulated_cost`` unless it
is 0 for a run that used tokens: OpenHands writes 0 for models it cannot price,
and an unknown cost is not $0). Per-call rows carry no cost: ``costs[]`` items
have no response id to join on.

Dedup key: ``openhands:<response_id>``, shared with the ``openhands`` trajectory
format. An item without a response id is keyed by a hash of (session, position,
counts).

Tool calls: the history is walked like a trajectory (``openhands.walk_events``):
each action with ``tool_call_metadata`` is a call, joined to its observation by
``cause``. Evaluation tool-call ids repeat across instances (some models number
them ``toolu_01``, ``toolu_02`` ...), so ids are ``<line_no>:<tool_call_id>``;
the logged id is kept in ``protocol_call_id``. History events that cannot be
decoded are passed over and counted in an ``invalid_events`` session event.
Outputs before OpenHands 0.9 logged the history as ``[action, observation]``
pairs: they are read in order like a flat list.

Session: ``openhands-eval:<run>/<instance_id>`` where ``<run>`` is the last part
of ``metadata.eval_output_dir`` (the same instance is run by many models and
runs; without the directory the id is ``openhands-eval:<instance_id>``).
``task_label`` = ``instance_id``; ``project`` = ``instance.repo``;
``started/ended`` from the history's timestamps. Outcome: ``success`` when a
report says ``resolved: true``; else ``capped`` when ``error`` says a limit was
hit (maximum iterations or budget); ``error`` for any other ``error`` or
``resolved: false``; else the history's outcome (``finish`` called →
``success``), else ``unknown``.

Problems: ``invalid-utf8``, ``invalid-json``, ``wrong-type`` (a field of the
wrong type), ``missing-field`` (no ``instance_id``). Skip rule: ``blank-line``.
Lines are independent, so resuming needs no state.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from decimal import Decimal
from pathlib import PurePath
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from tokaudit.ingest import openhands
from tokaudit.ingest.base import Line, ParseResult, check_utf8, merge_llm_call
from tokaudit.ingest.openhands import AccumulatedUsage, Tokens, Walk, clip

FORMAT = "openhands-eval"
AGENT = "openhands"
FILE_PATTERNS = ("*.jsonl",)

MAX_COST_USD = 1e9
Cost = Annotated[float, Meta(ge=0, le=MAX_COST_USD)]
_COST_QUANTUM = Decimal(1).scaleb(-18)  # the store keeps 18 decimal places


class TokenUsageItem(Struct):
    model: str | None = None
    prompt_tokens: Tokens = 0
    completion_tokens: Tokens = 0
    cache_read_tokens: Tokens = 0
    cache_write_tokens: Tokens = 0
    response_id: str | None = None
    context_window: Tokens | None = None


class Metrics(Struct):
    accumulated_cost: Cost | None = None
    accumulated_token_usage: AccumulatedUsage | None = None
    token_usages: list[TokenUsageItem] | None = None
    response_latencies: list[Raw] | None = None


class Metadata(Struct):
    eval_output_dir: str | None = None


class Instance(Struct):
    repo: str | None = None


class EvalLine(Struct):
    instance_id: str | None = None
    test_result: Raw = Raw(b"null")
    metadata: Metadata | None = None
    history: list[Raw] | None = None
    metrics: Metrics | None = None
    error: str | None = None
    instance: Instance | None = None
    report: Raw = Raw(b"null")


class Report(Struct):
    resolved: bool | None = None


class TestResult(Struct):
    resolved: bool | None = None
    report: Report | None = None


_line = msgspec.json.Decoder(EvalLine)
_test_result = msgspec.json.Decoder(TestResult)
_report = msgspec.json.Decoder(Report)
_raw_list = msgspec.json.Decoder(list[Raw])

# A line of an evaluation output: instance_id first, then the other EvalOutput fields.
_KEYS = ("test_result", "instruction", "metadata", "history", "metrics", "instance", "error", "report")


def default_roots() -> list[Any]:
    """Evaluation outputs live inside an OpenHands checkout: no default folder."""
    return []


def sniff(head: list[Any]) -> bool:
    """True when the first JSON value is an evaluation instance (``instance_id`` + ``test_result`` + history or metrics)."""
    first = head[0] if head else None
    return (
        isinstance(first, dict)
        and isinstance(first.get("instance_id"), str)
        and "test_result" in first
        and ("history" in first or "metrics" in first)
    )


_PREFIX = re.compile(rb'^\{\s*"instance_id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"(?:' + b"|".join(k.encode() for k in _KEYS) + rb')"\s*:')


def sniff_prefix(first: bytes) -> bool:
    """True when an over-long first line starts like an evaluation instance (``instance_id`` first)."""
    return bool(_PREFIX.match(first))


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse evaluation output lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    for line in lines:
        if not line.data.strip():
            result.skipped["blank-line"] += 1
            continue
        try:
            check_utf8(line.data)
            item = _line.decode(line.data)
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            result.decode_problem(line, exc)
            continue
        if not item.instance_id:
            result.problem(line, "missing-field", "an evaluation line without instance_id")
            continue
        _use_instance(result, line, item)
        result.lines_ok += 1
    return result


def _session_id(item: EvalLine) -> str:
    run = clip(PurePath(item.metadata.eval_output_dir).name) if item.metadata and item.metadata.eval_output_dir else ""
    instance = clip(item.instance_id)
    return f"openhands-eval:{run}/{instance}" if run else f"openhands-eval:{instance}"


def _flatten(history: list[Raw]) -> list[Raw]:
    """Events in order; outputs before OpenHands 0.9 logged ``[action, observation]`` pairs."""
    events: list[Raw] = []
    for raw in history:
        if bytes(raw).startswith(b"["):
            events.extend(_raw_list.decode(raw))  # a sub-list of an already valid document
        else:
            events.append(raw)
    return events


def _resolved(item: EvalLine) -> bool | None:
    """``resolved`` from a report (top level, ``test_result.report`` or ``test_result``), None if none says."""
    for raw, decoder in ((item.report, _report), (item.test_result, _test_result)):
        if bytes(raw) == b"null":
            continue
        try:
            value = decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            continue  # a report of another shape (or nested past decoding) says nothing tokaudit can use
        if isinstance(value, TestResult) and value.report is not None and value.report.resolved is not None:
            return value.report.resolved
        if value.resolved is not None:
            return value.resolved
    return None


def _outcome(item: EvalLine, walk: Walk) -> str:
    resolved = _resolved(item)
    if resolved is True:
        return "success"
    if item.error:
        return "capped" if openhands.says_capped(item.error) else "error"
    if resolved is False:
        return "error"
    return walk.outcome


def _use_instance(result: ParseResult, line: Line, item: EvalLine) -> None:
    session_id = _session_id(item)
    history = _flatten(item.history or [])
    events, bad, first_bad = openhands.decode_events(history)
    walk = openhands.walk_events(events, session_id=session_id, line_no=line.line_no, id_prefix=f"{line.line_no}:")
    if bad:
        detail = f"{bad} of {len(history)} history events could not be used; first: {first_bad}"
        result.add_event({"line_no": line.line_no, "session_id": session_id, "ts_utc": walk.ended, "kind": "invalid_events", "detail": detail[:500]})
    result.add_session(
        {
            "session_id": session_id,
            "agent": AGENT,
            "project": clip(item.instance.repo) if item.instance else None,
            "task_label": clip(item.instance_id),
            "outcome": _outcome(item, walk),
            "started_at_utc": walk.started,
            "ended_at_utc": walk.ended,
        }
    )
    metrics = item.metrics or Metrics()
    if metrics.token_usages:
        calls = [_usage_item_row(u, i, walk, session_id, line.line_no) for i, u in enumerate(metrics.token_usages)]
    else:
        calls = list(walk.calls.values())  # older outputs: the history's per-response usage
    rows: dict[str, dict[str, Any]] = {}
    for row in calls:
        # A response id listed twice: keep the larger record, as the store would.
        old = rows.get(row["call_key"])
        rows[row["call_key"]] = row if old is None else merge_llm_call(old, row)
    if rows:
        extra = openhands.remainder_row(metrics.accumulated_token_usage, rows.values(), session_id, line.line_no, walk.ended)
    else:
        extra = _accumulated_row(metrics, session_id, line.line_no, walk)
    if extra is not None:
        rows[extra["call_key"]] = extra
    for row in rows.values():
        result.add_llm_call(row)
    for tool in walk.tools.values():
        result.add_tool_call(tool)


def _usage_item_row(u: TokenUsageItem, index: int, walk: Walk, session_id: str, line_no: int) -> dict[str, Any]:
    if u.response_id:
        key = f"openhands:{clip(u.response_id)}"
    else:
        material = f"{session_id}|{index}|{u.prompt_tokens}|{u.completion_tokens}|{u.cache_read_tokens}|{u.cache_write_tokens}"
        key = "openhands:" + hashlib.sha256(material.encode()).hexdigest()[:32]
    logged = walk.calls.get(key, {})  # the same response as the history logged it, if it did
    return openhands.usage_row(
        key,
        session_id,
        line_no,
        walk.created.get(u.response_id or ""),
        walk.models.get(u.response_id or "") or u.model,
        prompt=u.prompt_tokens,
        completion=u.completion_tokens,
        cache_read=u.cache_read_tokens,
        cache_write=u.cache_write_tokens,
        reasoning=logged.get("reasoning_tokens"),
        stop_reason=logged.get("stop_reason"),
        context_window=u.context_window,
    )


def _accumulated_row(metrics: Metrics, session_id: str, line_no: int, walk: Walk) -> dict[str, Any] | None:
    """Outputs with no per-call usage at all: the instance's accumulated total as one aggregate row."""
    acc = metrics.accumulated_token_usage
    if acc is None or (acc.prompt_tokens == 0 and acc.completion_tokens == 0):
        return None
    row = openhands.usage_row(
        f"openhands:aggregate:{session_id}",
        session_id,
        line_no,
        walk.ended,
        acc.model if acc.model and acc.model != "default" else None,
        prompt=acc.prompt_tokens,
        completion=acc.completion_tokens,
        cache_read=acc.cache_read_tokens,
        cache_write=acc.cache_write_tokens,
    )
    cost = metrics.accumulated_cost
    row["is_aggregate"] = True
    row["aggregate_calls"] = len(metrics.response_latencies) if metrics.response_latencies is not None else None
    # 0 for a run that used tokens means "not priced", not free.
    row["reported_cost_usd"] = Decimal(repr(cost)).quantize(_COST_QUANTUM) if cost else None
    return row
