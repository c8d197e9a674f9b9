"""Recording MCP stdio traffic (tokaudit.capture) and ingesting what was recorded.

The recorder tests use a stand-in server (a few lines of Python). The end-to-end
test runs a real MCP SDK client against tests/mcp_server_fixture.py through the
recorder, in both protocol generations, and skips when the ``mcp`` package
(test extra) is not installed.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from tests.conftest import ROOT
from tokaudit.capture import main, record_stdio
from tokaudit.ingest.base import Line

FAKE_SERVER = textwrap.dedent(
    """
    import sys
    for line in sys.stdin:
        sys.stdout.write(line)
        sys.stdout.flush()
    sys.stdout.write("not json at all\\n")
    sys.stdout.write('{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"' + "y" * 5000 + '"}]}}\\n')
    sys.exit(3)
    """
)


def _run_recorder(tmp_path, client_lines: list[bytes], max_message_bytes: int = 1000):
    """Feed ``client_lines`` to a recorded fake server; return (exit code, bytes relayed to the client, transcript records)."""
    stdin_r, stdin_w = os.pipe()
    os.write(stdin_w, b"".join(client_lines))
    os.close(stdin_w)
    out_path = tmp_path / "relayed"
    transcript = tmp_path / "t.jsonl"
    with open(out_path, "wb") as out:
        code = record_stdio([sys.executable, "-c", FAKE_SERVER], transcript, "fake", max_message_bytes=max_message_bytes,
                            stdin_fd=stdin_r, stdout_fd=out.fileno())  # fmt: skip
    os.close(stdin_r)
    records = [json.loads(x) for x in transcript.read_bytes().splitlines()]
    return code, out_path.read_bytes(), records, transcript


def test_recorder_relays_bytes_unchanged_and_records_each_line(tmp_path):
    request = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "t", "arguments": {"q": "\\u00e9"}}}\n'
    code, relayed, records, transcript = _run_recorder(tmp_path, [request])
    assert code == 3
    big = b'{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"' + b"y" * 5000 + b'"}]}}\n'
    assert relayed == request + b"not json at all\n" + big  # what the client got: exactly what the server wrote
    assert [r.get("event") for r in records] == ["connection-opened", None, None, None, None, "connection-closed"]
    assert records[-1]["exit_code"] == 3
    assert {r["server"] for r in records} == {"fake"} and len({r["connection"] for r in records}) == 1
    sent, echoed, raw, omitted = records[1:5]
    assert (sent["direction"], echoed["direction"]) == ("client_to_server", "server_to_client")
    # Embedded byte for byte: the transcript line holds the message exactly as sent.
    assert request.rstrip(b"\n") in transcript.read_bytes().splitlines()[1]
    assert (raw["raw"], raw["raw_bytes"]) == ("not json at all", 15)
    assert omitted["omitted_bytes"] == len(big) - 1 and len(omitted["head"]) == 1024

    from tokaudit.ingest import mcp_jsonrpc

    data = transcript.read_bytes().splitlines()
    r = mcp_jsonrpc.parse([Line(i, 0, d) for i, d in enumerate(data, 1)], path=str(transcript), state=None)
    assert r.skipped == {"non-json-message": 1, "request:other": 1} and not r.problems  # the echo: a tools/call "from the server"
    (row,) = r.tool_calls.values()
    assert (row["result_truncated"], row["result_bytes"], row["args_bytes"]) == (True, len(big) - 1, len('{"q":"é"}'.encode()))


def test_recorder_command_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--server", "x", "--transcript", str(tmp_path / "t.jsonl")])
    assert "give the server's command" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_real_sdk_exchange_is_recorded_and_ingested(tmp_path, store, mode):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    from tokaudit.ingest.runner import ingest_paths

    transcript = tmp_path / "fixture.jsonl"
    server = [sys.executable, str(ROOT / "tests" / "mcp_server_fixture.py")]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tokaudit.capture", "--server", "fixture", "--transcript", str(transcript), "--", *server],
        cwd=str(ROOT),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    progress: list[float] = []

    async def on_progress(done, total, message):
        progress.append(done)

    async def session():
        with anyio.fail_after(60):
            async with Client(params, mode=mode) as client:
                listed = await client.list_tools()
                assert {t.name for t in listed.tools} == {"echo", "big", "fail", "reject"}
                assert (await client.call_tool("echo", {"text": "héllo"})).content[0].text == "héllo"
                assert len((await client.call_tool("big", {"n": 20000, "steps": 3}, progress_callback=on_progress)).content[0].text) == 20000
                assert (await client.call_tool("fail", {"reason": "nope"})).is_error
                with pytest.raises(MCPError):
                    await client.call_tool("reject", {"code": -32099})

    anyio.run(session)
    assert progress == [1, 2, 3]

    ingest_paths(store, [transcript], workers=1)
    (fmt, problems) = store.duck.execute("SELECT format, lines_problem FROM sources").fetchall()[0]
    assert (fmt, problems) == ("mcp-jsonrpc", 0)
    rows = {
        r[0]: r[1:]
        for r in store.duck.execute(
            "SELECT tool_name, mcp_server, tool_kind, args_bytes, result_bytes, result_content_types, is_error, error_kind, error_code, "
            "progress_count, cancelled, duration_method, result_tokens_method FROM tool_calls"
        ).fetchall()
    }
    tok = "tokenizer:o200k_base"
    assert rows == {
        "echo": ("fixture", "mcp", len('{"text":"héllo"}'.encode()), len("héllo".encode()), "text", False, None, None, 0, False, "timestamps", tok),
        "big": ("fixture", "mcp", len(b'{"n":20000,"steps":3}'), 20000, "text", False, None, None, 3, False, "timestamps", tok),
        "fail": ("fixture", "mcp", len(b'{"reason":"nope"}'), len(b"Error executing tool fail: failed: nope"), "text", True, "tool", None, 0, False, "timestamps", tok),
        "reject": ("fixture", "mcp", len(b'{"code":-32099}'), len(b"rejected by policy"), "error", True, "protocol", -32099, 0, False, "timestamps", tok),
    }
    defs = dict(store.duck.execute("SELECT tool_name, description_bytes FROM tool_defs").fetchall())
    assert defs == {"echo": len(b"Echo the given text back."), "big": 68, "fail": len(b"Always fails."), "reject": len(b"Refuses at the protocol level.")}
    (version,) = store.duck.execute("SELECT agent_version FROM sessions").fetchall()[0]
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
