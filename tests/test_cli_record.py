"""`tokaudit record` relays stdio unchanged and writes a transcript that ingests as mcp-jsonrpc."""

from __future__ import annotations

import json
import subprocess
import sys

from tokaudit.ingest.runner import ingest_paths


def test_record_relays_and_transcribes(tmp_path, store):
    transcript = tmp_path / "t.jsonl"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
    # `cat` stands in for a server: it answers each request with the request itself.
    proc = subprocess.run(
        [sys.executable, "-m", "tokaudit.cli", "record", "--server", "echo", "--transcript", str(transcript), "--", "cat"],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == request  # relayed byte for byte, nothing else on stdout
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [r.get("event") or r["direction"] for r in records] == ["connection-opened", "client_to_server", "server_to_client", "connection-closed"]
    assert {r["server"] for r in records} == {"echo"}
    summary = ingest_paths(store, [transcript], workers=1)
    assert summary.lines_problem == 0 and summary.lines_read == 4
    assert store.duck.execute("SELECT format FROM sources").fetchall() == [("mcp-jsonrpc",)]
