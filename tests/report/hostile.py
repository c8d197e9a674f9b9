"""A store built from logs an attacker wrote: markup in every name a log controls, secrets in results and bad lines.

The generic event format is used because it lets a log set every name freely; a
finding whose explanation, tool and evidence carry the same payloads is stored
beside the audit's own, as a detector quoting a hostile result would store it.
"""

from __future__ import annotations

import json
from pathlib import Path

IMG = "<img src=x onerror=alert(1)>"
BREAKOUT = '"><script>alert(2)</script>'
SVG = "<svg onload=alert(3)>"
BOLD_LINK = "<a href='javascript:alert(4)'><b>click</b></a>"
PAYLOADS = (IMG, BREAKOUT, SVG, BOLD_LINK)
SECRETS = ("abcdefghijklmnopqrstuvwx", "sk-ant-api03-SECRETSECRETSECRET", "ghp_0123456789abcdefghij")


def _event(**fields) -> str:
    return json.dumps({"tokaudit": 1, **fields})


def write_logs(folder: Path) -> Path:
    """A generic-format log whose session, project, agent, model, tool and MCP server names are payloads."""
    folder.mkdir(parents=True, exist_ok=True)
    sid = f"run{BREAKOUT}"
    lines = [
        _event(type="session", ts="2026-03-12T09:00:00Z", session_id=sid, agent=SVG, project=BREAKOUT, task_label=IMG),
        _event(type="llm_call", ts="2026-03-12T09:00:01Z", session_id=sid, call_key="1", model="claude-sonnet-4-5-20250929",
               provider="anthropic", input_tokens=1200, cache_write_5m_tokens=4000, output_tokens=90),
        _event(type="tool_call", ts="2026-03-12T09:00:02Z", session_id=sid, tool_call_id="t1", call_key="1", tool_name=IMG,
               args={"q": BOLD_LINK}, result=f"Authorization: Bearer {SECRETS[0]} {IMG}", is_error=False),
        _event(type="llm_call", ts="2026-03-12T09:00:03Z", session_id=sid, call_key="2", model=BOLD_LINK, provider="acme",
               input_tokens=10, cache_read_tokens=5000, output_tokens=40),
        _event(type="tool_call", ts="2026-03-12T09:00:04Z", session_id=sid, tool_call_id="t2", call_key="2",
               tool_name=f"mcp__{BREAKOUT}__{IMG}", args={"key": SECRETS[1]}, result=f"token={SECRETS[2]}", is_error=True),
        _event(type="llm_call", ts="2026-03-12T09:00:05Z", session_id=sid, call_key="3", model="claude-sonnet-4-5-20250929",
               provider="anthropic", input_tokens=5, cache_read_tokens=9000, output_tokens=30),
        # A broken line carrying a key: it becomes an ingest problem whose excerpt must show redacted.
        f'{{"tokaudit":1,"type":"llm_call","api_key":"{SECRETS[1]}","note":"{IMG}", oops',
    ]  # fmt: skip
    path = folder / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def add_hostile_finding(store) -> None:
    """Store, in the latest audit run, a finding on the hostile session that quotes payloads and secrets."""
    duck = store.duck
    run_id = duck.execute("SELECT max(audit_run_id) FROM audit_runs").fetchall()[0][0]
    session = duck.execute("SELECT session_id FROM sessions WHERE session_id LIKE 'generic:run%' LIMIT 1").fetchall()[0][0]
    evidence = {"first_result": f"{IMG} Authorization: Bearer {SECRETS[0]}", "args": {"api_key": SECRETS[1]}, "note": BREAKOUT}
    duck.execute(
        "INSERT INTO findings (audit_run_id, finding_no, detector, severity, session_id, first_turn, last_turn, metric, value, threshold, "
        "excess_tokens, excess_usd, explanation, tool_key, evidence) VALUES (?, 999, ?, 'high', ?, 0, 1, ?, '3.5', ?, 1234, '0.5', ?, ?, ?)",
        [run_id, f"near_duplicates{SVG}", session, f"metric{IMG}", BOLD_LINK, f"explained {BREAKOUT} with ghp token {SECRETS[2]}", IMG, json.dumps(evidence)],
    )
