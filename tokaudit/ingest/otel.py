"""OpenTelemetry GenAI traces as OTLP/JSON files (``*.jsonl``, ``*.json``; no default folder).

Shape: what the OpenTelemetry Collector's ``file`` exporter writes, one OTLP
export request per line: ``{"resourceSpans":[{"resource":{"attributes":[…]},
"scopeSpans":[{"scope":{"name","version"},"spans":[…]}]}]}``. Ids are hex,
int64 values are decimal strings (numbers are accepted too), attribute values
are ``{stringValue|intValue|doubleValue|boolValue|arrayValue|kvlistValue|bytesValue}``.
Look-alikes read the same way: protobuf ``MessageToDict``/``MessageToJson``
output (base64 ids, enum names such as ``"SPAN_KIND_CLIENT"``, snake_case keys
with ``preserving_proto_field_name``), and the Python SDK's
``ConsoleSpanExporter`` (``{"name","context":{"trace_id":"0x…"},"kind":"SpanKind.CLIENT",
"attributes":{flat}}``). Every id is normalised to lowercase hex. A document
printed over several lines (``MessageToJson``, the console exporter's indented
output, a pretty-printed export request) is read when its first line is a bare
``{`` and it ends at a ``}`` in column 0.

Which spans count (semantic conventions v1.37+ and the older aliases):

* **Inference** spans become ``llm_calls``: ``gen_ai.operation.name`` chat,
  text_completion, generate_content, embeddings (and completion/responses);
  OpenInference/Traceloop/AgentOps/LangSmith span kind ``LLM``/``EMBEDDING``;
  OpenLLMetry ``llm.request.type``; or, lacking any of those, a span that is not
  an agent/tool/container and reports token usage (Vercel AI SDK). A span with
  no usage attribute gives no row (nothing was reported; a failed request was
  not billed) but still widens its session.
* **Agent and container** spans (``invoke_agent``, ``create_agent``,
  ``invoke_workflow``, kinds AGENT/CHAIN/workflow/task) are **never counted**:
  an ``invoke_agent`` span MAY repeat the sum of its children's usage (Langfuse
  skips agent operations for the same reason). The flip side: a remote agent
  whose inference is not traced shows no usage.
* **Nested inference**: when an inference span has an inference descendant that
  itself reports usage (a framework's LLM span around the SDK's span, both
  instrumented; Vercel's ``ai.generateText`` around ``doGenerate``), only the
  descendant counts: the innermost span is the billed request.
* ``execute_tool`` spans, kind TOOL spans and MCP ``tools/call`` spans become
  ``tool_calls``.

Usage mapping (``gen_ai.usage.input_tokens`` INCLUDES cache reads and writes):
``input_tokens ← input − cache_read − cache_creation``; ``cache_read_tokens ←
cache_read``; ``cache_write_5m_tokens ← cache_creation`` with ``cache_ttl_known``
false (OTel has no TTL; an ``ephemeral_5m/1h`` split, when present, is used and
makes the TTL known); ``output_tokens ← output`` (reasoning included);
``reasoning_tokens ← reasoning`` (NULL when absent). Accepted keys, first
present wins (see ``_INPUT`` … ``_REASONING``): the v1.37 names, the deprecated
``gen_ai.usage.prompt_tokens``/``completion_tokens``, OpenLLMetry/AgentOps
``gen_ai.usage.cache_read_input_tokens``/``cache_creation_input_tokens`` and
``llm.usage.*``, OpenInference ``llm.token_count.*``, Vercel ``ai.usage.*``,
and bare usage-object keys (LangSmith/OpenAI/Anthropic) as a last resort.

Exclusive input (the reference's caveat for pre-1.37 producers): when
cache_read + cache_creation exceeds the reported input, the input cannot
include them, so it is read as already uncached (Anthropic's own meaning) and
a ``usage_input_exclusive`` session event records it. For producers on the
pre-1.37 key names the finding sticks to the producer (instrumentation scope
name + version + provider): its other calls are read as exclusive too, even
where cache ≤ input, because one instrumentation version does not switch
meaning between calls. Calls of that producer stored by an earlier ingest of
the same file stay as read then. Bare Anthropic-shaped usage
(``input_tokens`` with ``cache_read_input_tokens``, or provider anthropic) is
exclusive from the start. Likewise reasoning > output means the output
excluded reasoning: output becomes output + reasoning
(``usage_output_exclusive`` event).

Model: ``gen_ai.response.model`` else ``gen_ai.request.model`` (then
OpenInference/OpenLLMetry/Vercel names). Provider: ``gen_ai.provider.name``
else ``gen_ai.system`` (then ``llm.provider``/``llm.system``/``ai.model.provider``),
lowercased and mapped to genai-prices ids where the mapping is plain
(``aws.bedrock``→aws, ``gcp.*``→google, ``azure.ai.*``→azure, …).
``message_id ← gen_ai.response.id``; ``reported_cost_usd ← llm.cost.total``.

Dedup key: ``call_key = "otel:<traceId>:<spanId>"``. The same span exported
twice (collector retries, two exporters, rotated files) is one call, in this
file and across files (``llm_calls_dedup``). ``gen_ai.response.id`` is kept as
``message_id`` but is not the key: mock servers, proxies and test cassettes
return constant ids, which would merge distinct calls.

Tool calls: ``tool_call_id = "<traceId>:<spanId>"`` of the call's outermost
span (a span id alone is unique only by chance: replayed or deterministic
producers reuse them); ``protocol_call_id ← gen_ai.tool.call.id`` (else
OpenInference ``tool.id``). A ``jsonrpc.request.id`` is NOT used: it is unique
only within one MCP session, and ``ingest.link`` matches ``protocol_call_id``
against MCP transcripts' JSON-RPC ids (the tool-and-time match links those
calls instead). Arguments and result come from the opt-in
``gen_ai.tool.call.arguments``/``.result`` (OpenInference ``input.value``/
``output.value``; Traceloop ``traceloop.entity.input``/``.output``, which wrap
the call's args/kwargs); OpenInference ``tool.parameters`` is the tool's
schema, not the call's arguments, so it is not read. Structured values are
measured as compact JSON. Sizes, sha256, skeleton and token counts
(``count_tokens``, labelled with its method) come from that text; an MCP
``CallToolResult`` is measured by its content blocks like the other formats; a
failed call with no result attribute by its status description (content type
"error"), like a JSON-RPC error in an MCP transcript. ``result_excerpt``/
``result_sig`` are ``result_features`` of what the model sees. ``duration_ms``
= end − start of the span (``duration_method`` "reported": span timing).
``is_error`` from status ERROR, ``error.type`` or an ``isError`` result;
``error_kind`` "protocol" (+ ``error_code``) when an MCP span's error is a
JSON-RPC code, else "tool" (``error.type=tool_error``, ``isError``, exceptions).

MCP and linking: one tool call may be recorded by up to three spans in one
trace: the agent's ``execute_tool`` span, the MCP client's ``tools/call`` span
(CLIENT, its child) and the MCP server's ``tools/call`` span (SERVER, child of
the client span through ``params._meta.traceparent``). A tool span whose
nearest tool-span ancestor (walking up through non-GenAI and container spans,
stopping at agent or inference spans) has a compatible tool name is the same
call: they are stored as ONE row under the outermost span's id, each column filled
from whichever span has it (the outermost first), ``is_error`` if any says so.
When the spans reach tokaudit in different ingests of a growing file, the
later ones merge into the row stored first (its id is kept in state).
``mcp_server``: a ``mcp.server.name`` attribute when some instrumentation sets
one; else the ``service.name`` resource attribute of the SERVER span's process
(the MCP server itself); else the client span's ``server.address`` (HTTP
transports); else the ``mcp__server__tool`` form of the tool name. The client
process's own ``service.name`` is never used: it names the agent.
``call_key`` of a tool call: the latest counted inference span of the trace
that ended before the tool started, preferring one with the same parent span
(a heuristic: OTel does not link a tool span to the request that asked for it).

Sessions: ``session_id = "otel:<gen_ai.conversation.id>"`` (aliases
OpenInference ``session.id``, ``langfuse.session.id``), inherited from the
nearest ancestor that has one, else the first conversation id seen in the
trace, else ``"otel:<traceId>"``. A trace's fallback is fixed when first used
and kept in state; so when a growing file is read in pieces, spans read before
their trace's conversation id appeared stay in the trace-id session.
``sessions.agent`` is the outermost ``invoke_agent`` span's ``gen_ai.agent.name``
("otel" when no agent span names one; ``gen_ai.agent.id`` → ``agent_id``). An
agent's name is not a task label: one agent does many different tasks, so it
makes the agent cohort the detectors compare sessions in, not the task cohort
(where a long session among short ones of the "same task" would read as a
blowup). A nested agent span with its own conversation id opens a session whose
``parent_session_id`` is the enclosing agent's session, whose ``agent`` is the
enclosing agent's name and whose ``subagent_type`` is the nested agent's name;
a nested agent without one stays in its parent's session. OTel names no task:
``task_label`` stays empty. ``project`` is the
``service.name`` and ``agent_version`` the ``service.version`` of the process
that emitted the span. started/ended come from span start/end times;
``outcome`` is "error" when an outermost agent span has status ERROR.

Line accounting (a line is one export request holding many spans): a line is
used when it holds at least one inference, agent or tool span. Skip rules:
``blank-line``; ``no-spans`` (an export request with no spans);
``no-genai-spans`` (only non-GenAI spans: HTTP, database, …);
``genai-spans-not-counted`` (only GenAI spans that give no rows: workflows,
chains, ``create_agent``, MCP methods other than ``tools/call``);
``signal:metrics`` / ``signal:logs`` (other OTLP signals written to the same
file); ``multi-line-document`` (lines after the first of a document printed over
several lines; the first line carries the document's outcome). Problems:
``invalid-utf8``, ``invalid-json``; ``unknown-shape`` (JSON that is not an
export request or console span); ``invalid-span`` (a span without valid
trace/span ids or of the wrong type: the request's other spans are still used,
and the line is counted as the problem); ``invalid-usage`` (a usage count that is
not a whole number from 0 up, e.g. ``"12abc"``, ``-5`` or ``12.5``: the call is
kept with that count as 0 and the line is counted as the problem); ``unterminated-document`` /
``document-too-large`` for a multi-line document that never closes.

State (JSON, bounded): per recent trace the parent links and the GenAI spans'
roles, sessions and tool row ids, so spans that arrive in any order across
lines, and across ingests of a growing file, still find their parents; the
producers found to report exclusive input. At most ``MAX_STATE_TRACES`` traces
and ``MAX_STATE_LINKS`` parent links are kept (oldest traces dropped first).
While one call parses, links of every span are held; past ``MAX_MEMORY_LINKS``
the oldest traces without GenAI spans in this call are dropped. Only the
attributes the parser reads are converted (message contents never are).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec

from tokaudit.ingest.base import Line, ParseResult, check_utf8, result_features, sha256_hex, split_mcp_name
from tokaudit.ingest.skeleton import args_skeleton, args_values
from tokaudit.ingest.tokens import count_tokens

FORMAT = "otel"
AGENT = "otel"
FILE_PATTERNS = ("*.jsonl", "*.json")  # names picked up when walking a folder

MAX_STATE_TRACES = 256
MAX_STATE_LINKS = 8192
MAX_MEMORY_LINKS = 500_000  # parent links held while parsing one call (oldest traces without new spans go first)
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_ATTRIBUTES = 1024  # per span; SDKs default to 128
MAX_VALUE_DEPTH = 8
MAX_ANCESTORS = 128
MAX_TOKENS = 10**15  # a count above this is garbage, not usage
MAX_NAME_CHARS = 256
MAX_STATUS_CHARS = 64 * 1024  # a status description stands in for a failed call's result
_EPOCH = datetime(1970, 1, 1)
_MAX_NS = 253402300799 * 10**9  # 9999-12-31T23:59:59Z

_decoder = msgspec.json.Decoder()

# --- attribute names -----------------------------------------------------------------------------

_INPUT = (
    "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt", "llm.usage.prompt_tokens",
    "ai.usage.inputTokens", "ai.usage.promptTokens", "input_tokens", "prompt_tokens",
)  # fmt: skip
_OUTPUT = (
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion", "llm.usage.completion_tokens",
    "ai.usage.outputTokens", "ai.usage.completionTokens", "output_tokens", "completion_tokens",
)  # fmt: skip
_CACHE_READ = (
    "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens", "llm.token_count.prompt_details.cache_read",
    "gen_ai.usage.input_token_details.cache_read", "ai.usage.cachedInputTokens", "input_token_details.cache_read",
    "prompt_tokens_details.cached_tokens", "cache_read_input_tokens",
)  # fmt: skip
_CACHE_WRITE = (
    "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens", "llm.token_count.prompt_details.cache_write",
    "gen_ai.usage.input_token_details.cache_creation", "input_token_details.cache_creation", "cache_creation_input_tokens",
)  # fmt: skip
_WRITE_5M = (
    "gen_ai.usage.cache_creation.ephemeral_5m_input_tokens", "gen_ai.usage.input_token_details.ephemeral_5m_input_tokens",
    "input_token_details.ephemeral_5m_input_tokens", "cache_creation.ephemeral_5m_input_tokens",
)  # fmt: skip
_WRITE_1H = (
    "gen_ai.usage.cache_creation.ephemeral_1h_input_tokens", "gen_ai.usage.input_token_details.ephemeral_1h_input_tokens",
    "input_token_details.ephemeral_1h_input_tokens", "cache_creation.ephemeral_1h_input_tokens",
)  # fmt: skip
_REASONING = (
    "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens", "llm.token_count.completion_details.reasoning",
    "gen_ai.usage.output_token_details.reasoning", "ai.usage.reasoningTokens", "output_token_details.reasoning",
    "completion_tokens_details.reasoning_tokens",
)  # fmt: skip
# Cache keys of semconv v1.37+: their producers follow the inclusive rule by spec.
_V137_CACHE_KEYS = frozenset({"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens"})
_USAGE_PREFIXES = ("gen_ai.usage", "llm.token_count", "llm.usage", "ai.usage")

_MODEL = (
    "gen_ai.response.model", "gen_ai.request.model", "llm.response.model_name", "llm.model_name", "llm.request.model_name",
    "llm.response.model", "llm.request.model", "ai.response.model", "ai.model.id", "embedding.model_name",
)  # fmt: skip
_PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider")
_CONVERSATION = ("gen_ai.conversation.id", "session.id", "langfuse.session.id")
_SPAN_KIND_ATTRS = ("openinference.span.kind", "traceloop.span.kind", "agentops.span.kind", "langsmith.span.kind")
_TOOL_NAME = ("gen_ai.tool.name", "tool.name", "mcp.tool.name")
_TOOL_CALL_ID = ("gen_ai.tool.call.id", "tool.id", "tool_call.id")
_TOOL_ARGS = ("gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input")
_TOOL_RESULT = ("gen_ai.tool.call.result", "output.value", "traceloop.entity.output")
_OTHER_KEYS = (
    "gen_ai.operation.name", "mcp.method.name", "llm.request.type", "gen_ai.response.id", "gen_ai.response.finish_reasons",
    "llm.finish_reason", "openai.response.service_tier", "gen_ai.openai.response.service_tier", "llm.cost.total", "gen_ai.agent.name",
    "agent.name", "gen_ai.agent.id", "traceloop.entity.name", "error.type", "rpc.response.status_code", "mcp.server.name", "server.address",
)  # fmt: skip
# The attributes the parser reads; the rest (message contents, HTTP details, …) are never converted.
_WANTED = frozenset(
    _INPUT + _OUTPUT + _CACHE_READ + _CACHE_WRITE + _WRITE_5M + _WRITE_1H + _REASONING + _MODEL + _PROVIDER + _CONVERSATION
    + _SPAN_KIND_ATTRS + _TOOL_NAME + _TOOL_CALL_ID + _TOOL_ARGS + _TOOL_RESULT + _OTHER_KEYS
)  # fmt: skip
# A span with no attribute under these prefixes is not a GenAI span: only its parent link is kept.
_GENAI_PREFIXES = ("gen_ai.", "llm.", "openinference.", "traceloop.", "agentops.", "langsmith.", "mcp.", "ai.")
_RESOURCE_KEYS = frozenset({"service.name", "service.version"})

_INFERENCE_OPS = frozenset({"chat", "text_completion", "generate_content", "embeddings", "completion", "responses"})
_AGENT_OPS = frozenset({"invoke_agent"})
_CONTAINER_OPS = frozenset({"create_agent", "invoke_workflow", "agent_step"})
_INFERENCE_KINDS = frozenset({"llm", "embedding"})
_AGENT_KINDS = frozenset({"agent"})
_CONTAINER_KINDS = frozenset({"chain", "workflow", "task"})
_LLM_REQUEST_TYPES = frozenset({"chat", "completion", "embedding"})

_PROVIDERS = {
    "openai": "openai", "azure.ai.openai": "azure", "az.ai.openai": "azure", "azure.ai.inference": "azure",
    "az.ai.inference": "azure", "azure": "azure", "anthropic": "anthropic", "aws.bedrock": "aws", "bedrock": "aws",
    "gcp.gemini": "google", "gcp.vertex_ai": "google", "gcp.gen_ai": "google", "vertex_ai": "google", "gemini": "google",
    "google": "google", "mistral_ai": "mistral", "mistralai": "mistral", "mistral": "mistral", "x_ai": "x-ai", "xai": "x-ai",
    "deepseek": "deepseek", "groq": "groq", "cohere": "cohere", "perplexity": "perplexity", "openrouter": "openrouter",
}  # fmt: skip

# OTLP/JSON field names, and the snake_case ones MessageToDict writes with preserving_proto_field_name.
_VALUE_KINDS = {
    "stringValue": "s", "string_value": "s", "intValue": "i", "int_value": "i", "doubleValue": "d", "double_value": "d",
    "boolValue": "b", "bool_value": "b", "arrayValue": "a", "array_value": "a", "kvlistValue": "kv", "kvlist_value": "kv",
    "bytesValue": "s", "bytes_value": "s",
}  # fmt: skip
_KINDS = {"SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2, "UNSET": 0, "OK": 1, "ERROR": 2}
_SERVER = 2
_INT = re.compile(r"\s*-?\d{1,20}\s*")
_JSONRPC_CODE = re.compile(r"-?\d{1,9}")
_TYPE_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,32}")


def default_roots() -> list[Any]:
    """OTLP files live wherever a collector was told to write them: there is no default folder."""
    return []


# --- sniffing ------------------------------------------------------------------------------------

_REQUEST_KEYS = ("resourceSpans", "resource_spans")
_OTHER_SIGNAL_KEYS = {"resourceMetrics": "metrics", "resource_metrics": "metrics", "resourceLogs": "logs", "resource_logs": "logs"}


def _is_console_span(obj: dict[str, Any]) -> bool:
    ctx = obj.get("context")
    return isinstance(ctx, dict) and "trace_id" in ctx and "span_id" in ctx and isinstance(obj.get("kind"), str) and obj["kind"].startswith("SpanKind.")


def sniff(head: list[Any]) -> bool:
    """True when the first JSON values are OTLP export requests holding spans (or console-exporter spans).

    Examples:
        >>> sniff([{"resourceSpans": []}]), sniff([{"resourceMetrics": []}]), sniff([{"type": "user"}])
        (True, False, False)
    """
    saw_spans = False
    for obj in head:
        if not isinstance(obj, dict):
            return False
        if any(k in obj for k in _REQUEST_KEYS) or _is_console_span(obj):
            saw_spans = True
        elif not any(k in obj for k in _OTHER_SIGNAL_KEYS):
            return False
    return saw_spans


_PREFIX = re.compile(
    rb'^\{\s*"resource_?[sS]pans"\s*:'
    rb'|^\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"context"\s*:\s*\{\s*"trace_id"\s*:\s*"0x'
)


def sniff_prefix(first: bytes) -> bool:
    """True when the first bytes start an export request or a console span (one document over many lines)."""
    return bool(_PREFIX.match(first))


# --- small value helpers -------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    """An integer from an OTLP int64 (decimal string or number); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() and abs(value) < 2**63 else None
    if isinstance(value, str):
        if value.isascii() and value.isdigit() and len(value) <= 20:
            return int(value)  # the usual shape: a decimal int64 string
        if _INT.fullmatch(value):
            return int(value)
    return None


def _tokens(value: Any) -> int | None:
    n = _int(value)
    return n if n is not None and 0 <= n < MAX_TOKENS else None


def _nanos(value: Any) -> int | None:
    n = _int(value)
    return n if n is not None and 0 < n < _MAX_NS else None


def _utc(ns: int | None) -> datetime | None:
    return None if ns is None else _EPOCH + timedelta(microseconds=ns // 1000)


def _iso_nanos(value: Any) -> int | None:
    """Console-exporter times: ISO 8601 with a zone (``2026-03-10T10:00:00.123456Z``)."""
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    offset = ts.utcoffset()
    if offset is not None:
        ts = (ts - offset).replace(tzinfo=None)
    return _nanos((ts - _EPOCH) // timedelta(microseconds=1) * 1000)


def _id(value: Any, n_bytes: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lowercase hex: from hex, ``0x`` hex or base64; None if invalid or all zero.

    Examples:
        >>> _id("EEE19B7EC3C1B174", 8), _id("7uGbfsPBsXQ=", 8), _id("0xeee19b7ec3c1b174", 8), _id("", 8)
        ('eee19b7ec3c1b174', 'eee19b7ec3c1b174', 'eee19b7ec3c1b174', None)
    """
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    text = value[2:] if value[:2] in ("0x", "0X") else value
    raw: bytes | None = None
    if len(text) == 2 * n_bytes and text.isascii():
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raw = None  # 2n characters that are not hex: maybe base64 of another length
    if raw is not None and len(raw) == n_bytes:  # fromhex skips spaces: "ab cd…" decodes short
        hexed = raw.hex()
    else:
        # protobuf MessageToDict writes bytes fields as base64 (standard or URL-safe alphabet).
        padded = text + "=" * (-len(text) % 4)
        try:
            raw = base64.b64decode(padded, altchars=b"-_" if ("-" in text or "_" in text) else None, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) != n_bytes:
            return None
        hexed = raw.hex()
    return None if not hexed.strip("0") else hexed


def _str(value: Any, limit: int = MAX_NAME_CHARS) -> str | None:
    if isinstance(value, str) and value:
        return value[:limit]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)[:limit]
    return None


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _first_tokens(attrs: dict[str, Any], keys: tuple[str, ...]) -> tuple[int | None, str | None]:
    """(count, key it came from) of the first key holding a valid token count."""
    for key in keys:
        if key in attrs:
            n = _tokens(attrs[key])
            if n is not None:
                return n, key
    return None, None


def _unreadable_count(attrs: dict[str, Any], groups: tuple[tuple[str, ...], ...]) -> str | None:
    """Why a usage count the span reports could not be read (the first group whose keys all hold
    something that is not a token count), or None when every reported count is readable."""
    for keys in groups:
        if _first_tokens(attrs, keys)[0] is not None:
            continue
        for key in keys:
            value = attrs.get(key)
            if value is None:
                continue
            shown = value if isinstance(value, (int, float)) and not isinstance(value, bool) else f"a {type(value).__name__}"
            return f"{key} is {shown}, not a token count; the call is kept with that count as 0"
    return None


def _any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value (None when empty or malformed)."""
    if not isinstance(value, dict) or depth > MAX_VALUE_DEPTH:
        return None
    for key, inner in value.items():
        kind = _VALUE_KINDS.get(key)
        if kind == "s":
            return inner if isinstance(inner, str) else None
        if kind == "i":
            n = _int(inner)
            # Kept as given when it is no int64, so a reader can report it rather than find nothing there.
            return inner if n is None and isinstance(inner, str) else n
        if kind == "d":
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return float(inner)
            return None  # "NaN"/"Infinity" strings and junk carry no usable number
        if kind == "b":
            return inner if isinstance(inner, bool) else None
        if kind == "a":
            values = inner.get("values") if isinstance(inner, dict) else None
            return [_any_value(v, depth + 1) for v in values[:MAX_ATTRIBUTES]] if isinstance(values, list) else []
        if kind == "kv":
            values = inner.get("values") if isinstance(inner, dict) else None
            return _key_values(values, depth + 1)
    return None


def _key_values(items: Any, depth: int = 0) -> dict[str, Any]:
    """An OTLP ``[{key, value}]`` list (inside a kvlist value) as a dict; the last key wins."""
    out: dict[str, Any] = {}
    if not isinstance(items, list):
        return out
    for item in items[:MAX_ATTRIBUTES]:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"), depth)
    return out


def _attributes(items: Any, wanted: frozenset[str] = _WANTED) -> tuple[dict[str, Any], bool]:
    """(the wanted attributes as plain values, whether any key is a GenAI one) of an OTLP attribute list.

    Only wanted keys are converted: message contents and transport details are the bulk of a span's bytes.
    """
    out: dict[str, Any] = {}
    genai = False
    if not isinstance(items, list):
        return out, genai
    for item in items[:MAX_ATTRIBUTES]:
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str):
            continue
        if key.startswith(_GENAI_PREFIXES):
            genai = True
        if key in wanted or key.startswith(_USAGE_PREFIXES):
            out[key] = _any_value(item.get("value"))
    _flatten_usage(out)
    return out, genai


def _console_attributes(value: Any, wanted: frozenset[str] = _WANTED) -> tuple[dict[str, Any], bool]:
    """Console-exporter attributes are already a flat ``{key: value}`` object."""
    if not isinstance(value, dict):
        return {}, False
    out: dict[str, Any] = {}
    genai = False
    for key, item in list(value.items())[:MAX_ATTRIBUTES]:
        if not isinstance(key, str):
            continue
        if key.startswith(_GENAI_PREFIXES):
            genai = True
        if key in wanted or key.startswith(_USAGE_PREFIXES):
            out[key] = item
    _flatten_usage(out)
    return out, genai


def _flatten_usage(attrs: dict[str, Any]) -> None:
    """``gen_ai.usage`` given as a kvlist (or a console dict of dicts) -> the dotted keys the alias table names."""
    for key, value in list(attrs.items()):
        if isinstance(value, dict) and key.startswith(_USAGE_PREFIXES):
            stack = [(key, value, 0)]
            while stack:
                prefix, node, level = stack.pop()
                for sub, inner in node.items():
                    if not isinstance(sub, str):
                        continue
                    dotted = f"{prefix}.{sub}"
                    if isinstance(inner, dict) and level < 3:
                        stack.append((dotted, inner, level + 1))
                    else:
                        attrs.setdefault(dotted, inner)


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _kind(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value.startswith("SpanKind."):
            value = "SPAN_KIND_" + value[9:]
        return _KINDS.get(value, 0)
    return 0


def _status(value: Any) -> tuple[int, str | None]:
    if not isinstance(value, dict):
        return 0, None
    code = value.get("code", value.get("status_code"))
    if isinstance(code, str):
        code = _STATUS.get(code, 0)
    elif not isinstance(code, int) or isinstance(code, bool):
        code = 0
    message = value.get("message", value.get("description"))
    return code, (message[:MAX_STATUS_CHARS] if isinstance(message, str) and message else None)


def _provider(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    name = value.strip().lower()[:64]
    if name in _PROVIDERS:
        return _PROVIDERS[name]
    head = name.split(".", 1)[0]  # Vercel ai.model.provider: "openai.chat", "anthropic.messages"
    return _PROVIDERS.get(head, name)


def _json_text(value: Any) -> bytes | None:
    """The text a structured or string attribute stands for, as UTF-8 bytes (None when absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    try:
        return msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):
        return None


# --- spans ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Span:
    """One GenAI span reduced to what the rows need (big attributes such as messages are dropped early)."""

    trace: str
    span: str
    parent: str | None
    role: str  # i inference | a agent | t tool | c container / other GenAI
    line_no: int
    name: str
    kind: int
    start_ns: int | None
    end_ns: int | None
    is_error: bool
    conv: str | None
    service: str | None
    service_version: str | None
    producer: str
    # inference
    usage: dict[str, Any] | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None
    stop_reason: str | None = None
    service_tier: str | None = None
    cost: Decimal | None = None
    bad_usage: str | None = None  # why a reported count was unreadable (the line becomes a problem)
    # agent
    agent_name: str | None = None
    agent_id: str | None = None
    # tool
    tool: dict[str, Any] = field(default_factory=dict)
    mcp: bool = False
    mcp_servers: tuple[str | None, str | None, str | None] = (None, None, None)  # attribute, server process, address
    # filled in when resolving
    session: str = ""
    counted: bool = False


def _role(attrs: dict[str, Any], genai: bool) -> str | None:
    """The span's role: i inference, a agent, t tool, c other GenAI (no rows), None not GenAI."""
    if not genai:
        return None
    op = attrs.get("gen_ai.operation.name")
    op = op.lower() if isinstance(op, str) else None
    kind = _first(attrs, _SPAN_KIND_ATTRS)
    kind = kind.lower() if isinstance(kind, str) else None
    mcp_method = attrs.get("mcp.method.name")
    if op in _AGENT_OPS or kind in _AGENT_KINDS:
        return "a"
    if op in _CONTAINER_OPS or kind in _CONTAINER_KINDS:
        return "c"
    if op == "execute_tool" or kind == "tool" or mcp_method == "tools/call":
        return "t"
    request_type = attrs.get("llm.request.type")
    request_type = request_type if isinstance(request_type, str) else None  # an attribute may be an array
    if op in _INFERENCE_OPS or kind in _INFERENCE_KINDS or request_type in _LLM_REQUEST_TYPES:
        return "i"
    if _has_usage(attrs):
        return "i"  # no declared operation, but usage: an inference span of an older or custom producer
    return "c"


def _has_usage(attrs: dict[str, Any]) -> bool:
    return any(_first_tokens(attrs, keys)[0] is not None for keys in (_INPUT[:6], _OUTPUT[:6]))


def _usage(attrs: dict[str, Any], provider: str | None) -> dict[str, Any] | None:
    """The span's usage attributes as reported (not yet mapped), or None when it reports none."""
    inp, inp_key = _first_tokens(attrs, _INPUT)
    out, _ = _first_tokens(attrs, _OUTPUT)
    read, read_key = _first_tokens(attrs, _CACHE_READ)
    write, write_key = _first_tokens(attrs, _CACHE_WRITE)
    w5, _ = _first_tokens(attrs, _WRITE_5M)
    w1, _ = _first_tokens(attrs, _WRITE_1H)
    reasoning, _ = _first_tokens(attrs, _REASONING)
    if all(v is None for v in (inp, out, read, write, w5, w1)):
        return None
    bare_anthropic = inp_key == "input_tokens" and (
        read_key == "cache_read_input_tokens" or write_key == "cache_creation_input_tokens" or provider == "anthropic"
    )
    v137 = read_key in _V137_CACHE_KEYS or write_key in _V137_CACHE_KEYS
    return {"in": inp, "out": out, "read": read, "write": write, "w5": w5, "w1": w1, "reasoning": reasoning,
            "exclusive": bare_anthropic, "v137": v137}  # fmt: skip


def _map_usage(u: dict[str, Any], exclusive: bool) -> tuple[dict[str, Any], list[str]]:
    """Reported usage -> canonical token columns, and the flags raised on the way."""
    inp, read = u["in"], u["read"] or 0
    if u["w5"] is not None or u["w1"] is not None:
        split = (u["w5"] or 0) + (u["w1"] or 0)
        write = max(u["write"] or 0, split)
        # A total larger than its TTL split: the rest has an unknown TTL, priced as 5-minute writes.
        w5, w1, ttl_known = (u["w5"] or 0) + (write - split), u["w1"] or 0, write == split
    else:
        write = u["write"] or 0
        w5, w1, ttl_known = write, 0, write == 0
    flags = []
    if inp is None:
        uncached = 0  # only cache counts reported: no uncached input to speak of
    elif exclusive:
        uncached = inp
    elif read + write > inp:
        uncached = inp
        flags.append("input")
    else:
        uncached = inp - read - write
    out, reasoning = u["out"] or 0, u["reasoning"]
    if reasoning is not None and reasoning > out:
        out += reasoning
        flags.append("output")
    cols = {"input_tokens": uncached, "cache_read_tokens": read, "cache_write_5m_tokens": w5, "cache_write_1h_tokens": w1,
            "output_tokens": out, "reasoning_tokens": reasoning, "cache_ttl_known": ttl_known}  # fmt: skip
    return cols, flags


def _cost(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        cost = Decimal(str(value))
    except InvalidOperation:
        return None
    return cost if cost.is_finite() and 0 <= cost < 10**12 else None


def _tool_name(attrs: dict[str, Any], name: str) -> str | None:
    found = _str(_first(attrs, _TOOL_NAME))
    if found is None and attrs.get("traceloop.span.kind") == "tool":
        found = _str(attrs.get("traceloop.entity.name"))
    if found is None:
        # Span names "execute_tool get_weather" / "tools/call get_weather" carry the target.
        for prefix in ("execute_tool ", "tools/call "):
            if name.startswith(prefix) and len(name) > len(prefix):
                found = name[len(prefix) :][:MAX_NAME_CHARS]
    return found


def _measure_args(text: bytes) -> dict[str, Any]:
    tokens, method = count_tokens(text.decode("utf-8", "replace"))
    return {"args_bytes": len(text), "args_sha256": sha256_hex(text), "args_skeleton": args_skeleton(text) if text else None, "args_values": args_values(text) if text else None,
            "args_tokens": tokens, "args_tokens_method": method}  # fmt: skip


def _measure_result(text: bytes) -> dict[str, Any]:
    """Size, types and tokens of what the model sees of a result: an MCP CallToolResult's blocks, else the text."""
    value: Any = None
    if text[:1] in (b"{", b"[", b'"'):
        try:
            value = _decoder.decode(text)
        except (msgspec.DecodeError, RecursionError):
            value = None  # measured as plain text
    is_error = None
    blocks = None
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        blocks = value["content"]
        is_error = value.get("isError") if isinstance(value.get("isError"), bool) else None
    elif isinstance(value, list) and value and all(isinstance(b, dict) and "type" in b for b in value):
        blocks = value
    if blocks is not None:
        types, chunks, countable = set(), [], True
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            kind = kind if isinstance(kind, str) and _TYPE_NAME.fullmatch(kind) else "unknown"
            types.add(kind)
            if kind == "text" and isinstance(block.get("text"), str):
                chunks.append(block["text"].encode("utf-8", "surrogatepass"))
            elif kind in ("image", "audio") and isinstance(block.get("data"), str):
                chunks.append(block["data"].encode("utf-8"))
                countable = False  # base64 media: a tokenizer count of it means nothing
            else:
                chunks.append(msgspec.json.encode(block))
        seen = b"\n".join(chunks)
        content_types = ",".join(sorted(types))
    elif isinstance(value, str):
        seen, content_types, countable = value.encode("utf-8", "surrogatepass"), "text", True
    elif isinstance(value, (dict, list)):
        seen, content_types, countable = text, "json", True
    else:
        seen, content_types, countable = text, "text", True
    row: dict[str, Any] = {"result_bytes": len(seen), "result_sha256": sha256_hex(seen), "result_content_types": content_types,
                           **result_features(seen)}  # fmt: skip
    if countable:
        row["result_tokens"], row["result_tokens_method"] = count_tokens(seen.decode("utf-8", "replace"))
    if is_error:
        row["is_error"], row["error_kind"] = True, "tool"
    return row


def _tool_fields(attrs: dict[str, Any], span: _Span, status: tuple[int, str | None]) -> None:
    """Fill a tool span's row fields (everything that does not depend on other spans)."""
    name = _tool_name(attrs, span.name)
    mcp_method = attrs.get("mcp.method.name")
    span.mcp = mcp_method == "tools/call"
    row: dict[str, Any] = {"tool_name": name, "protocol_call_id": _str(_first(attrs, _TOOL_CALL_ID))}
    args = _json_text(_first(attrs, _TOOL_ARGS))
    if args is not None:
        row.update(_measure_args(args))
    result = _json_text(_first(attrs, _TOOL_RESULT))
    status_error = status[0] == 2
    if result is not None:
        row.update(_measure_result(result))
    elif status_error and status[1]:
        # No result recorded, but the status carries the error message (for MCP, the JSON-RPC error's):
        # what the agent hands back to the model in place of a result.
        text = status[1].encode("utf-8", "surrogatepass")
        tokens, method = count_tokens(status[1])
        row.update(result_bytes=len(text), result_sha256=sha256_hex(text), result_content_types="error", result_tokens=tokens,
                   result_tokens_method=method, **result_features(text))  # fmt: skip
    error_type = _str(attrs.get("error.type"))
    rpc_status = _str(attrs.get("rpc.response.status_code"))
    # On MCP spans a numeric error.type / rpc.response.status_code is the JSON-RPC error code.
    codes = (error_type, rpc_status) if span.mcp else ()
    code = next((c for c in codes if c is not None and _JSONRPC_CODE.fullmatch(c) and int(c) != 0), None)
    if code is not None:
        row["is_error"], row["error_kind"], row["error_code"] = True, "protocol", int(code)
    elif status_error or error_type is not None:
        row["is_error"], row["error_kind"] = True, "tool"
    elif "is_error" not in row:
        row["is_error"] = False
    if span.start_ns is not None and span.end_ns is not None and span.end_ns >= span.start_ns:
        row["duration_ms"], row["duration_method"] = round((span.end_ns - span.start_ns) / 1e6), "reported"
    span.tool = row
    server_attr = _str(attrs.get("mcp.server.name"))
    server_process = span.service if span.mcp and span.kind == _SERVER else None
    address = _str(attrs.get("server.address")) if span.mcp and span.kind != _SERVER else None
    span.mcp_servers = (server_attr, server_process, address)
    if server_attr:
        span.mcp = True


def _make_span(trace: str, span_id: str, parent: str | None, name: str, kind: int, start: int | None, end: int | None,
               status: tuple[int, str | None], attributes: tuple[dict[str, Any], bool], res: dict[str, Any], scope: str,
               line_no: int) -> _Span | None:  # fmt: skip
    """The slim record of a GenAI span, or None for spans that are not GenAI."""
    attrs = attributes[0]
    role = _role(attrs, attributes[1])
    if role is None:
        return None
    service = _str(res.get("service.name"))
    span = _Span(
        trace=trace, span=span_id, parent=parent, role=role, line_no=line_no, name=name, kind=kind, start_ns=start, end_ns=end,
        is_error=status[0] == 2, conv=_str(_first(attrs, _CONVERSATION)), service=service,
        service_version=_str(res.get("service.version")), producer=scope,
    )  # fmt: skip
    if role == "i":
        span.provider = _provider(_first(attrs, _PROVIDER))
        span.usage = _usage(attrs, span.provider)
        span.bad_usage = _unreadable_count(attrs, (_INPUT, _OUTPUT, _CACHE_READ, _CACHE_WRITE, _WRITE_5M, _WRITE_1H, _REASONING))
        span.model = _str(_first(attrs, _MODEL))
        span.response_id = _str(attrs.get("gen_ai.response.id"))
        reasons = _first(attrs, ("gen_ai.response.finish_reasons", "llm.finish_reason"))
        span.stop_reason = _str(reasons[0] if isinstance(reasons, list) and reasons else reasons, 64)
        span.service_tier = _str(_first(attrs, ("openai.response.service_tier", "gen_ai.openai.response.service_tier")), 64)
        span.cost = _cost(attrs.get("llm.cost.total"))
        span.producer = f"{scope}|{span.provider or ''}"
    elif role == "a":
        span.agent_name = _str(attrs.get("gen_ai.agent.name")) or _str(attrs.get("agent.name"))
        if span.agent_name is None and name.startswith("invoke_agent ") and len(name) > 13:
            span.agent_name = name[13:][:MAX_NAME_CHARS]
        span.agent_id = _str(attrs.get("gen_ai.agent.id"))
    elif role == "t":
        _tool_fields(attrs, span, status)
    return span


def _otlp_spans(request: dict[str, Any], line_no: int) -> tuple[list[tuple[str, str, str | None, _Span | None]], int]:
    """(trace, span, parent, GenAI record or None) for every valid span of an export request, and the invalid count."""
    found: list[tuple[str, str, str | None, _Span | None]] = []
    invalid = 0
    resource_spans = _get(request, "resourceSpans", "resource_spans")
    if not isinstance(resource_spans, list):
        return found, 1
    for rs in resource_spans:
        if not isinstance(rs, dict):
            invalid += 1
            continue
        resource = rs.get("resource")
        res = _attributes(resource.get("attributes"), _RESOURCE_KEYS)[0] if isinstance(resource, dict) else {}
        scopes = _get(rs, "scopeSpans", "scope_spans")
        if scopes is None:
            scopes = _get(rs, "instrumentationLibrarySpans", "instrumentation_library_spans")  # OTLP before 0.15
        if not isinstance(scopes, list):
            if scopes is not None:
                invalid += 1
            continue
        for ss in scopes:
            if not isinstance(ss, dict) or not isinstance(ss.get("spans", []), list):
                invalid += 1
                continue
            scope = ss.get("scope") or _get(ss, "instrumentationLibrary", "instrumentation_library")
            scope_key = "|".join(str(scope.get(k) or "")[:100] for k in ("name", "version")) if isinstance(scope, dict) else "|"
            for d in ss.get("spans") or []:
                if not isinstance(d, dict):
                    invalid += 1
                    continue
                trace, span_id = _id(_get(d, "traceId", "trace_id"), 16), _id(_get(d, "spanId", "span_id"), 8)
                if trace is None or span_id is None:
                    invalid += 1
                    continue
                parent = _id(_get(d, "parentSpanId", "parent_span_id"), 8)
                name = d.get("name") if isinstance(d.get("name"), str) else ""
                rec = _make_span(
                    trace, span_id, parent, name[:MAX_NAME_CHARS], _kind(d.get("kind")),
                    _nanos(_get(d, "startTimeUnixNano", "start_time_unix_nano")), _nanos(_get(d, "endTimeUnixNano", "end_time_unix_nano")),
                    _status(d.get("status")), _attributes(d.get("attributes")), res, scope_key, line_no,
                )  # fmt: skip
                found.append((trace, span_id, parent, rec))
    return found, invalid


def _console_span(d: dict[str, Any], line_no: int) -> tuple[list[tuple[str, str, str | None, _Span | None]], int]:
    ctx = d["context"]
    trace, span_id = _id(ctx.get("trace_id"), 16), _id(ctx.get("span_id"), 8)
    if trace is None or span_id is None:
        return [], 1
    resource = d.get("resource")
    res = _console_attributes(resource.get("attributes"), _RESOURCE_KEYS)[0] if isinstance(resource, dict) else {}
    name = d.get("name") if isinstance(d.get("name"), str) else ""
    scope = d.get("instrumentation_scope") or d.get("instrumentation_info")
    scope_key = "|".join(str(scope.get(k) or "")[:100] for k in ("name", "version")) if isinstance(scope, dict) else "|"
    rec = _make_span(
        trace, span_id, _id(d.get("parent_id"), 8), name[:MAX_NAME_CHARS], _kind(d.get("kind")), _iso_nanos(d.get("start_time")),
        _iso_nanos(d.get("end_time")), _status(d.get("status")), _console_attributes(d.get("attributes")), res, scope_key, line_no,
    )  # fmt: skip
    return [(trace, span_id, rec.parent if rec else _id(d.get("parent_id"), 8), rec)], 0


# --- the parse -----------------------------------------------------------------------------------


class _Parser:
    """One parse call: read every line (phase 1), then resolve links and emit rows (phase 2)."""

    def __init__(self, result: ParseResult) -> None:
        self.result = result
        st = result.state
        self.traces: dict[str, dict[str, Any]] = st.setdefault("traces", {})
        self.exclusive: list[str] = st.setdefault("exclusive_producers", [])
        self.new: list[_Span] = []
        self.new_traces: set[str] = set()
        self.links = sum(len(t["p"]) for t in self.traces.values())

    # phase 1 --------------------------------------------------------------------------------

    def line(self, line: Line) -> None:
        if not line.data.strip():
            self.result.skipped["blank-line"] += 1
            return
        try:
            check_utf8(line.data)
            value = _decoder.decode(line.data)
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            self.result.decode_problem(line, exc)
            return
        self.value(line, value)

    def document(self, lines: list[Line]) -> None:
        """A JSON value printed over several lines: its first line carries the outcome."""
        first = lines[0]
        self.result.skipped["multi-line-document"] += len(lines) - 1
        data = b"\n".join(ln.data for ln in lines)
        try:
            check_utf8(data)
            value = _decoder.decode(data)
        except (UnicodeDecodeError, msgspec.DecodeError, RecursionError) as exc:
            self.result.decode_problem(first, exc)
            return
        self.value(first, value)

    def bad_document(self, lines: list[Line], kind: str, message: str) -> None:
        self.result.problem(lines[0], kind, message)
        self.result.skipped["multi-line-document"] += len(lines) - 1

    def value(self, line: Line, value: Any) -> None:
        result = self.result
        if not isinstance(value, dict):
            result.problem(line, "unknown-shape", f"a JSON {type(value).__name__}, not an OTLP export request")
            return
        if any(k in value for k in _REQUEST_KEYS):
            spans, invalid = _otlp_spans(value, line.line_no)
        elif _is_console_span(value):
            spans, invalid = _console_span(value, line.line_no)
        else:
            signal = next((s for k, s in _OTHER_SIGNAL_KEYS.items() if k in value), None)
            if signal is not None:
                result.skipped[f"signal:{signal}"] += 1
            else:
                result.problem(line, "unknown-shape", "not an OTLP export request (no resourceSpans)")
            return
        usable = genai = 0
        bad_usage: str | None = None
        for trace, span_id, parent, rec in spans:
            self.register(trace, span_id, parent, rec)
            if rec is not None:
                genai += 1
                bad_usage = bad_usage or rec.bad_usage
                if rec.role != "c":
                    usable += 1
                    self.new.append(rec)
                    self.new_traces.add(trace)
        if invalid:
            # The valid spans are used; the line is reported so the malformed ones are not lost silently.
            result.problem(line, "invalid-span", f"{invalid} span(s) without valid ids or of the wrong type; {len(spans)} read")
        elif bad_usage:
            result.problem(line, "invalid-usage", bad_usage)  # the span is used; its unreadable count must not pass as a true 0
        elif usable:
            result.lines_ok += 1
        elif not spans:
            result.skipped["no-spans"] += 1
        elif genai:
            result.skipped["genai-spans-not-counted"] += 1
        else:
            result.skipped["no-genai-spans"] += 1

    def register(self, trace: str, span_id: str, parent: str | None, rec: _Span | None) -> None:
        """Remember a span's parent (all spans: GenAI ones may hang below plain ones) and a GenAI span's role."""
        tr = self.traces.get(trace)
        if tr is None:
            tr = self.traces[trace] = {"p": {}, "g": {}}
        if span_id not in tr["p"]:
            self.links += 1
        tr["p"][span_id] = parent or ""
        if rec is not None:
            entry: list[Any] = [rec.role, rec.conv]
            if rec.role == "i":
                entry += [rec.start_ns, rec.end_ns, 0, 1 if rec.usage else 0]  # start, end, counted, has usage
            elif rec.role in ("a", "t"):
                entry += [None, rec.agent_name if rec.role == "a" else rec.tool.get("tool_name")]  # session / row id, name
                old = tr["g"].get(span_id)
                if old is not None and old[0] == rec.role:
                    entry[2] = old[2]  # the same span exported again: keep the session / row it was given
            tr["g"][span_id] = entry
        if self.links > MAX_MEMORY_LINKS:
            self.evict(keep=self.new_traces | {trace})

    def evict(self, keep: set[str]) -> None:
        for tid in list(self.traces):
            if self.links <= MAX_MEMORY_LINKS // 2:
                break
            if tid not in keep:
                self.links -= len(self.traces.pop(tid)["p"])

    # phase 2 --------------------------------------------------------------------------------

    def ancestors(self, tr: dict[str, Any], span_id: str) -> Iterable[str]:
        parents, seen = tr["p"], {span_id}
        current = parents.get(span_id)
        while current and current not in seen and len(seen) <= MAX_ANCESTORS:
            yield current
            seen.add(current)
            current = parents.get(current)

    def session_of(self, rec: _Span) -> str:
        tr = self.traces[rec.trace]
        conv = rec.conv
        if conv is None:
            for a in self.ancestors(tr, rec.span):
                g = tr["g"].get(a)
                if g is not None and g[1]:
                    conv = g[1]
                    break
        if conv is not None:
            return f"otel:{conv}"
        if tr.get("s") is None:
            first = next((g[1] for g in tr["g"].values() if g[1]), None)
            tr["s"] = f"otel:{first or rec.trace}"
        return tr["s"]

    def finish(self) -> None:
        if not self.new:
            self.prune()
            return
        for rec in self.new:
            rec.session = self.session_of(rec)
            entry = self.traces[rec.trace]["g"][rec.span]
            if rec.role == "a" and entry[0] == "a":  # (a span id reused with another role keeps its last entry)
                entry[2] = rec.session
        self.mark_counted()
        self.mark_exclusive()
        for rec in self.new:
            self.touch_session(rec)
        for rec in self.new:
            if rec.role == "a":
                self.agent(rec)
            elif rec.role == "i" and rec.counted:
                self.llm_call(rec)
        self.tools()
        self.prune()

    def mark_counted(self) -> None:
        """An inference span with a usage-reporting inference descendant is not the billed request."""
        wrapped: dict[str, set[str]] = {}
        for tid in self.new_traces:
            tr = self.traces[tid]
            outer: set[str] = set()
            for sid, g in tr["g"].items():
                if g[0] == "i" and g[5]:
                    outer.update(a for a in self.ancestors(tr, sid) if tr["g"].get(a, ("",))[0] == "i")
            wrapped[tid] = outer
        for rec in self.new:
            if rec.role == "i" and rec.usage is not None:
                rec.counted = rec.span not in wrapped[rec.trace]
                entry = self.traces[rec.trace]["g"][rec.span]
                if entry[0] == "i":
                    entry[4] = int(rec.counted)

    def mark_exclusive(self) -> None:
        """Producers on pre-1.37 names that reported cache > input report exclusive input (see module docstring)."""
        known = set(self.exclusive)
        for rec in self.new:
            u = rec.usage
            if u is None or u["v137"] or u["exclusive"] or u["in"] is None or rec.producer in known:
                continue
            if (u["read"] or 0) + max(u["write"] or 0, (u["w5"] or 0) + (u["w1"] or 0)) > u["in"]:
                known.add(rec.producer)
                self.exclusive.append(rec.producer)
        del self.exclusive[:-64]  # bounded: the most recent producers

    def touch_session(self, rec: _Span) -> None:
        start, end = _utc(rec.start_ns), _utc(rec.end_ns if rec.end_ns is not None else rec.start_ns)
        row = self.result.seen_session(rec.session, start)
        if row is None:
            self.result.add_session(
                {
                    "session_id": rec.session, "agent": AGENT, "project": rec.service, "cwd": None, "git_branch": None,
                    "parent_session_id": None, "agent_id": None, "task_label": None, "outcome": None,
                    "agent_version": rec.service_version, "started_at_utc": start, "ended_at_utc": end, "subagent_type": None,
                }
            )  # fmt: skip
            return
        self.result.seen_session(rec.session, end)
        for key, value in (("project", rec.service), ("agent_version", rec.service_version)):
            if row.get(key) is None:
                row[key] = value

    def agent(self, rec: _Span) -> None:
        tr = self.traces[rec.trace]
        enclosing = next((tr["g"][a] for a in self.ancestors(tr, rec.span) if tr["g"].get(a, ("",))[0] == "a"), None)
        row = self.result.sessions[rec.session]
        if enclosing is None:
            # The outermost agent names the session's agent.
            row["agent"] = rec.agent_name[:MAX_NAME_CHARS] if rec.agent_name and row["agent"] == AGENT else row["agent"]
            row["agent_id"] = row["agent_id"] or rec.agent_id
            if rec.is_error:
                row["outcome"] = "error"
        elif enclosing[2] and enclosing[2] != rec.session:
            row["parent_session_id"] = row["parent_session_id"] or enclosing[2]
            row["subagent_type"] = row["subagent_type"] or rec.agent_name
            row["agent"] = enclosing[3][:MAX_NAME_CHARS] if enclosing[3] and row["agent"] == AGENT else row["agent"]
            row["agent_id"] = row["agent_id"] or rec.agent_id

    def llm_call(self, rec: _Span) -> None:
        u = rec.usage
        assert u is not None
        propagated = not u["exclusive"] and not u["v137"] and rec.producer in self.exclusive
        cols, flags = _map_usage(u, u["exclusive"] or propagated)
        if propagated and "input" not in flags and cols["cache_read_tokens"] + cols["cache_write_5m_tokens"] + cols["cache_write_1h_tokens"]:
            flags.insert(0, "input")
        for flag in flags:
            self.flag(rec, flag, u)
        self.result.add_llm_call(
            {
                "call_key": f"otel:{rec.trace}:{rec.span}", "session_id": rec.session, "line_no": rec.line_no,
                "ts_utc": _utc(rec.start_ns), "provider": rec.provider, "model": rec.model, "message_id": rec.response_id,
                "request_id": None, **cols, "web_search_requests": 0, "context_window_tokens": None, "usage_source": "reported",
                "output_is_lower_bound": False, "is_sidechain": False, "is_aggregate": False, "stop_reason": rec.stop_reason,
                "service_tier": rec.service_tier, "speed": None, "aggregate_calls": None, "reported_cost_usd": rec.cost,
            }
        )  # fmt: skip

    def flag(self, rec: _Span, which: str, u: dict[str, Any]) -> None:
        """One session event per line and kind, counting the spans it covers."""
        kind = f"usage_{which}_exclusive"
        if which == "input":
            cache = (u["read"] or 0) + (u["write"] or 0)
            detail = f"span {rec.span}: input {u['in']} read as excluding cache ({cache} cache tokens; producer {rec.producer})"
        else:
            detail = f"span {rec.span}: reasoning {u['reasoning']} > output {u['out']}: output read as excluding reasoning"
        key = (rec.line_no, kind)
        old = self.result.events.get(key)
        if old is None:
            self.result.add_event({"line_no": rec.line_no, "session_id": rec.session, "ts_utc": _utc(rec.start_ns), "kind": kind, "detail": detail})
            self.result.events[key]["_spans"] = 1
        else:
            old["_spans"] += 1
            old["detail"] = old["detail"].split(" [+", 1)[0] + f" [+{old['_spans'] - 1} more spans]"

    # tools ------------------------------------------------------------------------------------

    def chain_parent(self, tr: dict[str, Any], span_id: str) -> str | None:
        """The tool span this tool span is part of: the nearest tool ancestor with a compatible name."""
        own = tr["g"][span_id][3]
        for a in self.ancestors(tr, span_id):
            g = tr["g"].get(a)
            if g is None or g[0] == "c":
                continue  # plain spans (HTTP, …) and containers sit between the halves of one call
            if g[0] != "t":
                return None
            return a if _same_tool(own, g[3]) else None
        return None

    def tools(self) -> None:
        by_trace: dict[str, list[_Span]] = {}
        for rec in self.new:
            if rec.role == "t":
                by_trace.setdefault(rec.trace, []).append(rec)
        for tid, recs in by_trace.items():
            tr = self.traces[tid]
            groups: dict[str, list[str]] = {}
            for sid, g in tr["g"].items():
                if g[0] != "t":
                    continue
                root, hops = sid, 0
                while hops < MAX_ANCESTORS:
                    up = self.chain_parent(tr, root)
                    if up is None:
                        break
                    root, hops = up, hops + 1
                groups.setdefault(root, []).append(sid)
            for root, members in groups.items():
                fresh = [r for r in recs if r.span in members and tr["g"][r.span][0] == "t"]
                if not fresh:
                    continue
                # A row id given in an earlier ingest (kept in state, also for a span exported again) wins.
                stored = next((tr["g"][m][2] for m in members if tr["g"][m][2]), None)
                key = stored or f"{tid}:{root}"
                for m in members:
                    tr["g"][m][2] = key
                self.tool_row(tr, key, fresh)

    def tool_row(self, tr: dict[str, Any], key: str, fresh: list[_Span]) -> None:
        depth = {r.span: sum(1 for _ in self.ancestors(tr, r.span)) for r in fresh}
        fresh.sort(key=lambda r: depth[r.span])  # the outermost span first: its tool name and duration win
        head = fresh[0]
        row: dict[str, Any] = {
            "tool_call_id": key, "session_id": head.session, "call_key": self.asked_by(tr, head), "line_no": head.line_no,
            "ts_utc": _utc(head.start_ns), "result_line_no": head.line_no, "result_ts_utc": _utc(head.end_ns),
            "result_truncated": None, "cancelled": None, "progress_count": None,
        }  # fmt: skip
        is_error = False
        for rec in fresh:
            for col, value in rec.tool.items():
                if value is not None and row.get(col) is None:
                    row[col] = value
            is_error = is_error or bool(rec.tool.get("is_error"))
        row["is_error"] = is_error
        if is_error and row.get("error_kind") is None:
            row["error_kind"] = "tool"
        mcp = any(r.mcp for r in fresh)
        name = row.get("tool_name")
        split_server, split_tool = split_mcp_name(name) if name else (None, None)
        servers = [r.mcp_servers for r in fresh]
        server = (
            next((s[0] for s in servers if s[0]), None) or next((s[1] for s in servers if s[1]), None)
            or next((s[2] for s in servers if s[2]), None) or split_server
        )  # fmt: skip
        if mcp or split_server:
            row["tool_kind"], row["mcp_server"] = "mcp", server
            row["mcp_tool"] = split_tool or next((r.tool.get("tool_name") for r in fresh if r.mcp and r.tool.get("tool_name")), name)
        else:
            row["tool_kind"], row["mcp_server"], row["mcp_tool"] = "function", None, None
        self.result.add_tool_call(row)

    def asked_by(self, tr: dict[str, Any], tool: _Span) -> str | None:
        """The counted inference span of the trace that ended last before the tool started (same parent preferred)."""
        for a in self.ancestors(tr, tool.span):
            g = tr["g"].get(a)
            if g is not None and g[0] == "i" and g[4]:
                return f"otel:{tool.trace}:{a}"  # automatic function calling: the tool ran inside the request
            if g is not None and g[0] == "a":
                break
        if tool.start_ns is None:
            return None
        best: tuple[bool, int, str] | None = None
        for sid, g in tr["g"].items():
            if g[0] != "i" or not g[4] or g[3] is None or g[3] > tool.start_ns:
                continue
            candidate = (tr["p"].get(sid) == (tool.parent or ""), g[3], sid)
            if best is None or candidate > best:
                best = candidate
        return f"otel:{tool.trace}:{best[2]}" if best else None

    # state ------------------------------------------------------------------------------------

    def prune(self) -> None:
        """Keep the most recently touched traces, within the state's bounds."""
        for tid in list(self.new_traces):
            if tid in self.traces:
                self.traces[tid] = self.traces.pop(tid)  # most recent last
        links = sum(len(t["p"]) for t in self.traces.values())
        for tid in list(self.traces):
            if len(self.traces) <= MAX_STATE_TRACES and links <= MAX_STATE_LINKS:
                break
            links -= len(self.traces.pop(tid)["p"])
        if len(self.traces) == 1 and links > MAX_STATE_LINKS:
            # One huge trace: keep only its GenAI spans' links.
            (tr,) = self.traces.values()
            tr["p"] = {s: p for s, p in tr["p"].items() if s in tr["g"]}
        for event in self.result.events.values():
            event.pop("_spans", None)


def _same_tool(a: str | None, b: str | None) -> bool:
    """Two spans name the same tool: equal, one unnamed, or ``mcp__server__tool`` vs ``tool``."""
    if not a or not b or a == b:
        return True
    return (split_mcp_name(a)[1] or a) == (split_mcp_name(b)[1] or b)


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse OTLP/JSON trace lines into canonical rows (see module docstring)."""
    # A deep copy: the caller's state stays as it was (the runner stores it; tests reuse it).
    result = ParseResult(state=msgspec.json.decode(msgspec.json.encode(state or {})))
    parser = _Parser(result)
    doc: list[Line] | None = None
    doc_bytes = 0
    for line in lines:
        if doc is not None:
            doc.append(line)
            doc_bytes += len(line.data) + 1
            if line.data.rstrip() == b"}":
                parser.document(doc)
                doc = None
            elif doc_bytes > MAX_DOCUMENT_BYTES:
                parser.bad_document(doc, "document-too-large", f"a multi-line document over {MAX_DOCUMENT_BYTES} bytes is not read")
                doc = None
            continue
        if line.data.strip() == b"{":
            doc, doc_bytes = [line], len(line.data) + 1
            continue
        parser.line(line)
    if doc is not None:
        parser.bad_document(doc, "unterminated-document", f"a document opened with '{{' has no closing '}}' in column 0 ({len(doc)} lines)")
    parser.finish()
    return result
