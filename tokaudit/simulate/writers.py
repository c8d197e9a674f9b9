"""Writing simulated sessions in real log formats: Claude Code JSONL, Codex CLI rollouts, OpenTelemetry traces and
MCP JSON-RPC transcripts.

The only I/O of the simulator. Line builders (``claude_lines``, ``codex_lines``,
``otel_lines``, ``mcp_lines``) are pure and return encoded lines; ``write_session``
puts them on disk, the agent's side in one of three formats:

* ``<out>/projects/<encoded-cwd>/<sessionId>.jsonl`` — the main transcript
  (one line per content block, each repeating ``message.id``, ``requestId``
  and the request's final usage; tool results as ``user`` lines with
  ``toolUseResult``; ``compact_boundary`` system lines);
* ``<out>/projects/<encoded-cwd>/<sessionId>/subagents/agent-<id>.jsonl`` and
  ``agent-<id>.meta.json`` for subagents (``isSidechain`` true, the parent's
  ``sessionId``, their own ``agentId``);
* or, for a session rendered as Codex CLI (``agent_format="codex"``),
  ``<out>/codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``: ``session_meta``,
  ``turn_context``, per request its ``reasoning`` / ``message`` / ``function_call``
  items and a ``token_count`` event with the running totals (OpenAI's inclusive
  counts: cached input inside input, reasoning inside output; a cache write is
  uncached input; the provider loses a warm cache now and then, as OpenAI's does),
  ``function_call_output`` items, a re-emitted ``token_count``
  after some results (as Codex does), ``compacted`` lines; a subagent is a rollout
  of its own spawned by the parent thread (``source.subagent.thread_spawn``), which
  starts with the parent's running totals replayed within one second;
* or, for a session rendered as OpenTelemetry (``agent_format="otel"``),
  ``<out>/otel/<session uuid>.jsonl``: OTLP/JSON export requests, one per
  request (its ``chat`` span with GenAI semconv v1.37 usage — input inclusive
  of cache reads and writes — and the ``execute_tool`` spans it asked for, with
  opt-in arguments and results), then the ``invoke_agent`` span with the
  conversation id; a subagent is a nested ``invoke_agent`` span with its own
  conversation id; OTel has no compaction record;
* ``<out>/mcp/<server>/<connection>.jsonl`` — the server side of every MCP
  connection in the ``mcp-jsonrpc`` envelope format (``tokaudit.ingest.
  mcp_jsonrpc``): ``connection-opened``, ``initialize``, ``tools/list``, one
  ``tools/call`` request/response pair per call (same arguments bytes and
  result text as the Claude log, timestamps within a second), a
  ``notifications/tools/list_changed`` and a new listing when the surface
  changes, ``connection-closed``.

Every line is compact JSON (``msgspec``; ``separators=(",", ":")`` in effect),
which is also what ccusage needs to read it.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import msgspec

from tokaudit.simulate.agent import UI_TEXT_CHARS
from tokaudit.simulate.model import (
    Block,
    Compaction,
    McpCall,
    McpListing,
    McpServer,
    Prompt,
    Request,
    Sim,
    SubagentRun,
    ToolResult,
    model_family,
)
from tokaudit.simulate.text import EPOCH_UTC, iso_ms, uuid4

_encode = msgspec.json.encode
MCP_PROTOCOL = "2025-11-25"


def encode_cwd(cwd: str) -> str:
    """The project folder name Claude Code uses for a working directory.

    Examples:
        >>> encode_cwd("/home/dev/web_app.v2")
        '-home-dev-web-app-v2'
    """
    return re.sub(r"[^A-Za-z0-9-]", "-", cwd)


def _usage(req: Request) -> dict[str, Any]:
    u = req.usage
    return {
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_write_5m_tokens + u.cache_write_1h_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation": {"ephemeral_5m_input_tokens": u.cache_write_5m_tokens, "ephemeral_1h_input_tokens": u.cache_write_1h_tokens},
        "output_tokens": u.output_tokens,
        "service_tier": "standard",
    }


def _block(block: Block) -> dict[str, Any]:
    if block.kind == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    if block.kind == "text":
        return {"type": "text", "text": block.text}
    use = block.tool
    assert use is not None
    return {"type": "tool_use", "id": use.id, "name": use.name, "input": msgspec.Raw(use.input_json)}


def claude_lines(sim: Sim, slug: str) -> list[bytes]:
    """The transcript lines of one session (or subagent) in Claude Code's shape."""
    spec = sim.spec
    ids = random.Random(f"{spec.session_uuid}:{sim.agent.agent_id if sim.agent else 'main'}:lines")
    base: dict[str, Any] = {"isSidechain": sim.agent is not None, "userType": "external", "cwd": spec.cwd, "sessionId": spec.session_uuid,
                            "version": spec.version, "gitBranch": spec.git_branch}  # fmt: skip
    if sim.agent is not None:
        base["agentId"] = sim.agent.agent_id
    out: list[bytes] = []
    parent: str | None = None
    tool_line: dict[str, str] = {}  # tool_use id -> uuid of the line that asked for it
    first_prompt = True
    for event in sim.events:
        if isinstance(event, Request):
            msg_common = {"model": event.model, "id": event.message_id, "type": "message", "role": "assistant"}
            usage = _usage(event)
            for block in event.blocks:
                uid = uuid4(ids)
                message = {**msg_common, "content": [_block(block)], "stop_reason": event.stop_reason, "stop_sequence": None, "usage": usage}
                line = {"parentUuid": parent, **base, "slug": slug, "message": message, "requestId": event.request_id, "type": "assistant",
                        "uuid": uid, "timestamp": iso_ms(block.line_ms)}  # fmt: skip
                out.append(_encode(line))
                parent = uid
                if block.tool is not None:
                    tool_line[block.tool.id] = uid
        elif isinstance(event, ToolResult):
            uid = uuid4(ids)
            use = event.tool_use
            content: Any = [{"type": "text", "text": event.text}] if event.as_blocks else event.text
            result: dict[str, Any] = {"tool_use_id": use.id, "type": "tool_result", "content": content}
            if event.is_error:
                result["is_error"] = True
            tur = event.tool_use_result
            if tur is None:
                # MCP results: Claude Code repeats the content blocks (UI data; cut like agent._ui).
                ui = event.text[:UI_TEXT_CHARS]
                tur = [{"type": "text", "text": ui}] if event.as_blocks else ui
                if event.is_error and not ui.startswith("Error"):
                    tur = f"Error: {ui}"
            source = tool_line.get(use.id)
            line = {"parentUuid": source or parent, **base, "slug": slug, "type": "user", "message": {"role": "user", "content": [result]},
                    "uuid": uid, "timestamp": iso_ms(event.ts_ms), "toolUseResult": tur, "sourceToolAssistantUUID": source}  # fmt: skip
            out.append(_encode(line))
            parent = uid
        elif isinstance(event, Prompt):
            uid = uuid4(ids)
            line = {"parentUuid": parent, **base, "type": "user", "message": {"role": "user", "content": event.text}, "uuid": uid,
                    "timestamp": iso_ms(event.ts_ms)}  # fmt: skip
            if event.kind == "compact_summary":
                line["isVisibleInTranscriptOnly"] = True
                line["isCompactSummary"] = True
            out.append(_encode(line))
            if first_prompt and sim.agent is None:
                # Claude Code snapshots tracked files right after the first prompt (skipped by readers).
                snap = {"type": "file-history-snapshot", "messageId": uid,
                        "snapshot": {"messageId": uid, "trackedFileBackups": {}, "timestamp": iso_ms(event.ts_ms + 11)}, "isSnapshotUpdate": False}  # fmt: skip
                out.append(_encode(snap))
            first_prompt = False
            parent = uid
        elif isinstance(event, Compaction):
            uid = uuid4(ids)
            line = {"parentUuid": None, "logicalParentUuid": parent, **base, "type": "system", "subtype": "compact_boundary",
                    "content": "Conversation compacted", "isMeta": False, "timestamp": iso_ms(event.ts_ms), "uuid": uid, "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": event.pre_tokens}}  # fmt: skip
            out.append(_encode(line))
            parent = uid
        elif isinstance(event, SubagentRun):
            continue  # written to its own file
    return out


AGENT_FORMATS = ("claude-code", "codex", "otel")

# The Codex model standing in for each Claude family (same price tier, roughly).
CODEX_MODELS = {"opus": "gpt-5.1-codex-max", "sonnet": "gpt-5.1-codex", "haiku": "gpt-5.1-codex-mini"}
CODEX_VERSION = "0.104.0"
CODEX_CONTEXT_WINDOW_TOKENS = 272_000
CODEX_CACHE_LOSS_SHARE = 1 / 60


def own_uuid(sim: Sim) -> str:
    """The id of a session, or of a subagent as a thread (Codex) or conversation (OTel) of its own."""
    if sim.agent is None:
        return sim.spec.session_uuid
    return uuid4(random.Random(f"{sim.spec.session_uuid}:{sim.agent.agent_id}:codex"))


def _codex_line(ts_ms: int, kind: str, payload: dict[str, Any]) -> bytes:
    return _encode({"timestamp": iso_ms(ts_ms), "type": kind, "payload": payload})


def _codex_totals(totals: list[int], req: Request, cached_cap: int | None = None) -> list[int]:
    """The running totals after ``req``: input (cached and written included), cached input, output, reasoning.
    ``cached_cap``: the provider lost the warm cache and served only this much of the prompt from it."""
    u = req.usage
    reasoning = sum(b.tokens for b in req.blocks if b.kind == "thinking")
    cached = u.cache_read_tokens if cached_cap is None else min(u.cache_read_tokens, cached_cap)
    step = [u.input_total_tokens, cached, u.output_tokens, reasoning]
    return [a + b for a, b in zip(totals, step)]


def _token_count(ts_ms: int, totals: list[int], last: list[int]) -> bytes:
    def usage(v: list[int]) -> dict[str, int]:
        return {"input_tokens": v[0], "cached_input_tokens": v[1], "output_tokens": v[2], "reasoning_output_tokens": v[3], "total_tokens": v[0] + v[2]}

    info = {"total_token_usage": usage(totals), "last_token_usage": usage(last), "model_context_window": CODEX_CONTEXT_WINDOW_TOKENS}
    return _codex_line(ts_ms, "event_msg", {"type": "token_count", "info": info, "rate_limits": None})


def codex_lines(sim: Sim, parent: Sim | None = None) -> list[bytes]:
    """The rollout lines of one session (or, with its ``parent``, one subagent) in Codex CLI's shape."""
    spec = sim.spec
    rng = random.Random(f"{own_uuid(sim)}:codex-lines")
    first_ms = min([r.start_ms for r in sim.requests] + [e.ts_ms for e in sim.events if isinstance(e, Prompt)], default=spec.start_ms)
    meta = {"id": own_uuid(sim), "timestamp": iso_ms(first_ms), "cwd": spec.cwd, "originator": "codex_cli_rs",
            "cli_version": CODEX_VERSION, "model_provider": "openai", "source": "cli"}  # fmt: skip
    out: list[bytes] = []
    totals = [0, 0, 0, 0]
    if parent is None:
        out.append(_codex_line(first_ms, "session_meta", meta))
    else:
        # A spawned thread: its own meta, the parent's, then the parent's running totals replayed in one
        # second before the child's first line (readers skip the replay; it sets their baseline).
        replay_ms = (first_ms // 1000 - 1) * 1000
        parent_id = own_uuid(parent)
        meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}
        out.append(_codex_line(replay_ms, "session_meta", meta))
        out.append(_codex_line(replay_ms, "session_meta", {**meta, "id": parent_id, "source": "cli"}))
        for req in parent.requests:
            if req.end_ms < replay_ms:
                totals = _codex_totals(totals, req)
        out.append(_token_count(replay_ms, totals, totals))
    model = CODEX_MODELS[model_family(sim.model)]
    out.append(_codex_line(first_ms, "turn_context", {"cwd": spec.cwd, "model": model, "effort": "medium", "summary": "auto"}))
    for event in sim.events:
        if isinstance(event, Request):
            for block in event.blocks:
                if block.kind == "thinking":
                    item: dict[str, Any] = {"type": "reasoning", "summary": [{"type": "summary_text", "text": block.text}], "encrypted_content": None}
                elif block.kind == "text":
                    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": block.text}]}
                else:
                    use = block.tool
                    assert use is not None
                    item = {"type": "function_call", "name": use.name, "arguments": use.input_json.decode(), "call_id": f"call_{use.id}"}
                out.append(_codex_line(block.line_ms, "response_item", item))
            before = totals
            # OpenAI's prompt cache is best effort: now and then a warm prompt is served from the cache only up
            # to a shared prefix (real rollouts: about one request in sixty, 2,560–3,456 tokens read back).
            lost = event.index > 0 and rng.random() < CODEX_CACHE_LOSS_SHARE
            totals = _codex_totals(totals, event, 128 * rng.randint(20, 27) if lost else None)
            out.append(_token_count(event.end_ms, totals, [a - b for a, b in zip(totals, before)]))
        elif isinstance(event, ToolResult):
            item = {"type": "function_call_output", "call_id": f"call_{event.tool_use.id}", "output": event.text}
            out.append(_codex_line(event.ts_ms, "response_item", item))
            if rng.random() < 0.5:
                # Codex re-emits the running totals unchanged (about half of its token_count events).
                out.append(_token_count(event.ts_ms + 1, totals, totals))
        elif isinstance(event, Prompt):
            if event.kind == "compact_summary":
                continue  # carried by the compacted line before it
            out.append(_codex_line(event.ts_ms, "event_msg", {"type": "user_message", "message": event.text, "images": []}))
            out.append(_codex_line(event.ts_ms, "response_item",
                                   {"type": "message", "role": "user", "content": [{"type": "input_text", "text": event.text}]}))  # fmt: skip
        elif isinstance(event, Compaction):
            out.append(_codex_line(event.ts_ms, "compacted", {"message": "(summary of the conversation so far)"}))
            out.append(_codex_line(event.ts_ms, "event_msg", {"type": "context_compacted"}))
    return out


OTEL_SERVICE = "sim-agent"
_EPOCH_MS = int(EPOCH_UTC.timestamp() * 1000)
_SPAN_INTERNAL, _SPAN_CLIENT = 1, 3


def _otel_attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            v: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            v = {"intValue": str(value)}  # OTLP/JSON writes int64 as a decimal string
        else:
            v = {"stringValue": str(value)}
        out.append({"key": key, "value": v})
    return out


def _otel_export(spans: list[dict[str, Any]]) -> bytes:
    resource = {"attributes": _otel_attrs({"service.name": OTEL_SERVICE, "service.version": "1.0.0"})}
    return _encode({"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "tokaudit.simulate", "version": "1"}, "spans": spans}]}]})


def _span(trace: str, span: str, parent: str | None, name: str, kind: int, start_ms: int, end_ms: int, attrs: dict[str, Any],
          error: bool = False) -> dict[str, Any]:  # fmt: skip
    # The simulator's clock counts from EPOCH_UTC; OTLP's from the Unix epoch, in nanoseconds.
    start_ns, end_ns = ((_EPOCH_MS + ms) * 1_000_000 for ms in (start_ms, max(end_ms, start_ms)))
    out = {"traceId": trace, "spanId": span, "name": name, "kind": kind, "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(end_ns),
           "attributes": _otel_attrs(attrs), "status": {"code": 2 if error else 0}}  # fmt: skip
    if parent:
        out["parentSpanId"] = parent
    return out


def otel_lines(sim: Sim) -> list[bytes]:
    """One session (and its subagents) as OTLP/JSON export requests of one trace (GenAI semantic conventions)."""
    ids = random.Random(f"{sim.spec.session_uuid}:otel")
    trace = f"{ids.getrandbits(128):032x}"
    out: list[bytes] = []

    def agent(run: Sim, parent_span: str | None) -> tuple[str, int, int]:
        """Export ``run``'s requests and tools under a new agent span; returns (span id, start, end)."""
        span_id = f"{ids.getrandbits(64):016x}"
        start, end = run.spec.start_ms, run.spec.start_ms
        for event in run.events:
            if isinstance(event, Request):
                u = event.usage
                usage = {"gen_ai.usage.input_tokens": u.input_total_tokens, "gen_ai.usage.output_tokens": u.output_tokens,
                         "gen_ai.usage.cache_read.input_tokens": u.cache_read_tokens,
                         "gen_ai.usage.cache_creation.input_tokens": u.cache_write_5m_tokens + u.cache_write_1h_tokens}  # fmt: skip
                attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": event.model,
                         "gen_ai.response.model": event.model, "gen_ai.response.id": event.message_id, **usage,
                         "gen_ai.response.finish_reasons": event.stop_reason}  # fmt: skip
                spans = [_span(trace, f"{ids.getrandbits(64):016x}", span_id, f"chat {event.model}", _SPAN_CLIENT, event.start_ms, event.end_ms, attrs)]
                for use in event.tool_uses:
                    result = use.result
                    done_ms = result.ts_ms if result is not None else event.end_ms + 1
                    tool_attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": use.name, "gen_ai.tool.call.id": use.id,
                                  "gen_ai.tool.call.arguments": use.input_json.decode()}  # fmt: skip
                    if result is not None:
                        tool_attrs["gen_ai.tool.call.result"] = result.text
                        if result.is_error:
                            tool_attrs["error.type"] = "tool_error"
                    spans.append(_span(trace, f"{ids.getrandbits(64):016x}", span_id, f"execute_tool {use.name}", _SPAN_INTERNAL,
                                       event.end_ms + 1, done_ms, tool_attrs, error=bool(result and result.is_error)))  # fmt: skip
                    end = max(end, done_ms)
                out.append(_otel_export(spans))
                end = max(end, event.end_ms)
            elif isinstance(event, SubagentRun):
                child = agent(event.sim, span_id)
                end = max(end, child[2])
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": run.agent.agent_type if run.agent else "coding-agent",
                 "gen_ai.conversation.id": own_uuid(run)}  # fmt: skip
        out.append(_otel_export([_span(trace, span_id, parent_span, f"invoke_agent {attrs['gen_ai.agent.name']}", _SPAN_INTERNAL, start, end, attrs)]))
        return span_id, start, end

    agent(sim, None)
    return out


def _envelope(ts_ms: int, direction: str | None, server: McpServer, message: Any = None, **extra: Any) -> bytes:
    obj: dict[str, Any] = {"timestamp": iso_ms(ts_ms)}
    if direction:
        obj["direction"] = direction
    obj["server"] = server.name
    obj["connection"] = server.connection
    if message is not None:
        obj["message"] = message
    obj.update(extra)
    return _encode(obj)


def mcp_lines(server: McpServer, client_version: str, client_name: str = "claude-code") -> list[bytes]:
    """One MCP connection as a recorded transcript (client's view of the pipe)."""
    c2s, s2c = "client_to_server", "server_to_client"
    t0 = server.opened_ms
    out = [_envelope(t0, None, server, event="connection-opened")]
    out.append(_envelope(t0 + 5, c2s, server, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                               "params": {"protocolVersion": MCP_PROTOCOL, "capabilities": {"roots": {}},
                                                          "clientInfo": {"name": client_name, "version": client_version}}}))  # fmt: skip
    out.append(_envelope(t0 + 25, s2c, server, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": MCP_PROTOCOL,
                                                "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": server.name, "version": server.version}}}))  # fmt: skip
    out.append(_envelope(t0 + 27, c2s, server, {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    next_id = 1
    for record in sorted(server.records, key=lambda r: r.request_ms if isinstance(r, McpCall) else r.ts_ms):
        rid = next_id
        next_id += 1
        if isinstance(record, McpListing):
            t = record.ts_ms
            if record.changed:
                out.append(_envelope(t, s2c, server, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
                t += 3
            out.append(_envelope(t + 1, c2s, server, {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}))
            out.append(_envelope(t + 12, s2c, server, {"jsonrpc": "2.0", "id": rid, "result": {"tools": record.tools}}))
        else:
            params = {"name": record.tool, "arguments": msgspec.Raw(record.input_json)}
            out.append(_envelope(record.request_ms, c2s, server, {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}))
            result = {"content": [{"type": "text", "text": record.text}], "isError": record.is_error}
            out.append(_envelope(record.response_ms, s2c, server, {"jsonrpc": "2.0", "id": rid, "result": result}))
    if server.closed_ms is not None:
        out.append(_envelope(server.closed_ms, None, server, event="connection-closed", exit_code=0))
    return out


def write_lines(path: Path, lines: list[bytes]) -> int:
    """Write lines (newline-terminated) to ``path``, making folders; returns bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    return len(data)


def _rollout_path(out: Path, sim: Sim) -> Path:
    first_ms = min((r.start_ms for r in sim.requests), default=sim.spec.start_ms)
    stamp = iso_ms(first_ms)  # 2026-03-02T00:01:01.005Z
    day = stamp[:10].replace("-", "/")
    return out / "codex" / "sessions" / day / f"rollout-{stamp[:19].replace(':', '-')}-{own_uuid(sim)}.jsonl"


def write_session(out: Path, sim: Sim, slug: str, agent_format: str = "claude-code") -> dict[str, Any]:
    """Write one session's transcript, its subagents' transcripts and its MCP transcripts; returns their paths.

    ``agent_format`` is ``claude-code``, ``codex`` or ``otel``: the format of the agent's side (MCP transcripts are the same).
    """
    paths: dict[str, Any] = {"subagents": [], "mcp": []}
    if agent_format == "otel":
        main = out / "otel" / f"{sim.spec.session_uuid}.jsonl"
        written = write_lines(main, otel_lines(sim))  # subagents are spans of the same trace
        paths["transcript"] = str(main.relative_to(out))
    elif agent_format == "codex":
        main = _rollout_path(out, sim)
        written = write_lines(main, codex_lines(sim))
        paths["transcript"] = str(main.relative_to(out))
        for run in sim.subagents:
            sub = _rollout_path(out, run.sim)
            written += write_lines(sub, codex_lines(run.sim, parent=sim))
            paths["subagents"].append(str(sub.relative_to(out)))
    elif agent_format == "claude-code":
        written = _write_claude(out, sim, slug, paths)
    else:
        raise ValueError(f"unknown agent format {agent_format!r}: one of {', '.join(AGENT_FORMATS)}")
    for server in sim.servers.values():
        path = out / "mcp" / server.name / f"{server.connection}.jsonl"
        client = {"codex": ("codex-mcp-client", CODEX_VERSION), "otel": (OTEL_SERVICE, "1.0.0")}.get(agent_format, ("claude-code", sim.spec.version))
        written += write_lines(path, mcp_lines(server, client[1], client[0]))
        paths["mcp"].append(str(path.relative_to(out)))
    paths["bytes"] = written
    return paths


def _write_claude(out: Path, sim: Sim, slug: str, paths: dict[str, Any]) -> int:
    project = encode_cwd(sim.spec.cwd)
    main = out / "projects" / project / f"{sim.spec.session_uuid}.jsonl"
    written = write_lines(main, claude_lines(sim, slug))
    paths["transcript"] = str(main.relative_to(out))
    for run in sim.subagents:
        folder = out / "projects" / project / sim.spec.session_uuid / "subagents"
        sub = folder / f"agent-{run.agent_id}.jsonl"
        written += write_lines(sub, claude_lines(run.sim, slug))
        (folder / f"agent-{run.agent_id}.meta.json").write_text(_encode({"agentType": run.agent_type}).decode() + "\n", encoding="utf-8")
        paths["subagents"].append(str(sub.relative_to(out)))
    return written
