"""A small writer of Claude Code transcripts with chosen usage, for gate tests (regressions need exact scaling)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

MODEL = "claude-sonnet-4-5-20250929"
# Per request: uncached input, 5-minute cache write, cache read, output. Multiples of 20, so that
# x1.25 and x1.05 stay whole tokens and the cost scales exactly by the factor.
BASE_USAGE = (2000, 4000, 40000, 800)


def write_session(
    root: Path,
    *,
    cwd: str,
    requests: int,
    factor: float = 1.0,
    seed: int = 0,
    model: str = MODEL,
    tools: list[str] | None = None,
) -> str:
    """Write one session of ``requests`` model requests (each ``BASE_USAGE`` × ``factor``); returns its session id.

    ``tools`` names a tool to call in each request (its result follows), cycling through the list.
    """
    # Ids from a hash of the arguments: distinct sessions never share a request id (that would be deduplicated).
    rng = uuid.uuid5(uuid.NAMESPACE_URL, f"tokaudit-gate-test/{cwd}/{requests}/{factor}/{seed}/{model}")
    session_id = str(rng)
    hexid = rng.hex
    folder = root / cwd.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    t = datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc) + timedelta(hours=seed)
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id, "version": "2.1.70", "gitBranch": "main"}
    lines = []
    parent = None
    counter = 0

    def uid() -> str:
        nonlocal counter
        counter += 1
        return str(uuid.UUID(int=(rng.int + counter) % (1 << 128), version=4))

    def stamp() -> str:
        nonlocal t
        t += timedelta(seconds=3)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"

    first = uid()
    lines.append({**base, "parentUuid": None, "type": "user", "message": {"role": "user", "content": "Do the task."}, "uuid": first, "timestamp": stamp()})
    parent = first
    inp, cw, cr, out = (round(x * factor) for x in BASE_USAGE)
    for i in range(requests):
        me = uid()
        tool = tools[i % len(tools)] if tools else None
        content: list[dict] = [{"type": "text", "text": f"step {i}"}]
        tool_id = f"toolu_01{hexid[:8]}{i:014d}"
        if tool:
            content.append({"type": "tool_use", "id": tool_id, "name": tool, "input": {"query": f"q{i}"}})
        usage = {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr, "output_tokens": out, "service_tier": "standard"}
        lines.append(
            {
                **base,
                "parentUuid": parent,
                "type": "assistant",
                "message": {
                    "model": model,
                    "id": f"msg_01{hexid[:14]}{i:08d}",
                    "type": "message",
                    "role": "assistant",
                    "content": content,
                    "stop_reason": "tool_use" if tool else "end_turn",
                    "stop_sequence": None,
                    "usage": usage,
                },
                "requestId": f"req_011C{hexid[:12]}{i:08d}",
                "uuid": me,
                "timestamp": stamp(),
            }
        )
        parent = me
        if tool:
            res = uid()
            lines.append(
                {
                    **base,
                    "parentUuid": parent,
                    "type": "user",
                    "message": {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": f"result {i} " * 20}]},
                    "uuid": res,
                    "timestamp": stamp(),
                }
            )
            parent = res
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines), encoding="utf-8")
    return f"claude-code:{session_id}"


def write_cohort(root: Path, *, task: str, sessions: int, factor: float = 1.0) -> list[str]:
    """``sessions`` sessions of one task (cwd ``/ci/evals/<task>``), with 1..n requests each."""
    return [write_session(root, cwd=f"/ci/evals/{task}", requests=n, factor=factor, seed=n) for n in range(1, sessions + 1)]
