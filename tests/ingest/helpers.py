"""Building log lines for parser tests."""

from __future__ import annotations

import json
from typing import Any

from tokaudit.ingest.base import Line


def lines(*objs: Any) -> list[Line]:
    """Number compact JSON lines (bytes are passed through) the way the reader would."""
    out, offset = [], 0
    for i, obj in enumerate(objs, start=1):
        data = obj if isinstance(obj, bytes) else json.dumps(obj, separators=(",", ":")).encode()
        out.append(Line(i, offset, data))
        offset += len(data) + 1
    return out


def claude_assistant(msg_id="msg_1", req="req_1", *, out=10, inp=5, cw=100, cr=1000, cache_creation=True, blocks=None,
                     stop=None, model="claude-sonnet-4-5-20250929", version="2.1.100", session="s1", ts="2026-03-10T10:00:00.000Z", **top):
    usage: dict[str, Any] = {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr, "output_tokens": out}
    if cache_creation:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": cw, "ephemeral_1h_input_tokens": 0}
    return {
        "type": "assistant", "sessionId": session, "timestamp": ts, "version": version, "cwd": "/w", "isSidechain": False,
        "requestId": req, "uuid": f"u-{msg_id}-{out}",
        "message": {"id": msg_id, "model": model, "role": "assistant", "content": blocks or [{"type": "text", "text": "hi"}],
                    "stop_reason": stop, "usage": usage},
        **top,
    }


def claude_user_result(tool_id, content="ok", *, is_error=False, session="s1", ts="2026-03-10T10:00:02.500Z"):
    return {"type": "user", "sessionId": session, "timestamp": ts, "uuid": f"r-{tool_id}",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}]}}


def codex_line(kind, payload, ts="2026-03-10T10:00:00.000Z"):
    return {"timestamp": ts, "type": kind, "payload": payload}


def codex_tokens(total, last=None, ts="2026-03-10T10:00:00.000Z"):
    """total/last = (input incl. cached, cached, output incl. reasoning, reasoning)."""
    def tu(t):
        i, c, o, r = t
        return {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "reasoning_output_tokens": r, "total_tokens": i + o}
    return codex_line("event_msg", {"type": "token_count", "info": {"total_token_usage": tu(total), "last_token_usage": tu(last or total), "model_context_window": 258400}}, ts)
