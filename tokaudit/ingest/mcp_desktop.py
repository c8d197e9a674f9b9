"""Claude Desktop MCP logs: ``mcp.log`` (every server) and ``mcp-server-<NAME>.log`` (one server + its stderr).

Location: macOS ``~/Library/Logs/Claude/``; Windows ``%LOCALAPPDATA%\\Claude\\Logs\\``
(older builds ``%APPDATA%\\Claude\\logs\\``). Rotated files are ``*.old.log``.

Shape: text lines, not JSON::

    2026-03-01T09:44:53.641Z [filesystem] [info] Message from client: {"method":"tools/call",...,"id":2} { metadata: undefined }
    2025-07-23T13:13:02.813Z [info] [filesystem] Message from server: {"jsonrpc":"2.0","id":5,"error":{...}}

The two brackets come in either order; the level is the one in ``LEVELS``
(an older ``mcp.log`` has only ``[info]``). The `` { metadata: undefined }``
tail (absent in 2025 logs) is dropped. ``Message from client:`` /
``Message from server:`` bodies are JSON-RPC messages and go through the same
``McpTracker`` as ``mcp-jsonrpc`` transcripts (see that module for the
mapping of tools/call, tools/list, progress, cancellation, orphans, pending
calls, protocol versions and every tool_calls / tool_defs column).

Connections: ``Initializing server...`` starts one for its server (and ends
the previous one); ``Server transport closed`` / ``Client transport closed``
(also "... unexpectedly") ends it, and its unanswered, uncancelled tool calls
get ``error_kind`` ``missing-response``. A new ``initialize`` on a connection
that has carried messages also starts a new one. Session id
``mcp-desktop:<server>@<UTC time the connection started, ms>``; tool calls
``<server>@<time>:<JSON-RPC id>``. Both depend only on the log's content, so
the same call in ``mcp.log`` and in ``mcp-server-<NAME>.log`` (Desktop writes
both) gets the same ids: a cross-file dedup can recognise it.

Truncated bodies: Desktop may cut a long body in place (``…[N chars
truncated]…`` or ``[N chars truncated]``). A body that does not parse as JSON
but carries such a marker is salvaged: the id, method, tool name, isError and
content types are regexed out (``mcp_jsonrpc.salvage``) and a tool result is
recorded with ``result_truncated`` true, ``result_bytes`` = visible characters
plus the stated N (the original body's size, JSON framing included: an upper
bound of what reached the model; characters counted as bytes), no
``result_sha256``, and ``result_tokens`` = tokenizer count of the visible part
scaled to that size (method ``tokenizer:o200k_base+scaled-from-truncated``).
A truncated request keeps its call (name, id, time) with unknown arguments.

Skip rules (each line is counted once): ``blank-line``; ``raw-stderr``
(a line without the timestamp prefix: the server's own stderr, interleaved);
``record-continuation`` (lines of a multi-line record, such as the
``Using MCP server command: … {`` metadata block, up to its closing ``}``);
``desktop-notice`` (other Desktop messages: "Server started and connected
successfully", "Shutting down server...", "Attempting to connect...");
the tracker's rules (``request:<method>``, ``response:<method>``,
``notification:<method>``, ``progress-unmatched``, ``cancelled-unmatched``,
``truncated-message``). Problems: ``invalid-utf8`` (a prefixed line with bad
bytes), ``invalid-json`` / ``too-deep`` (a message body that does not parse
and carries no truncation marker), ``not-jsonrpc``, ``bad-timestamp`` (a prefix whose
timestamp is no date, such as month 13).

Sniffing: the lines are not JSON, so only ``sniff_prefix`` claims a file:
its first line must have the timestamp-and-brackets prefix with a level
bracket, and its first 4 KiB a Desktop MCP phrase (``MARKERS``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

import msgspec

from tokaudit.ingest.base import Line, ParseResult, utc_naive
from tokaudit.ingest.mcp_jsonrpc import C2S, S2C, McpTracker, Partial

FORMAT = "mcp-desktop"
AGENT = "mcp"
FILE_PATTERNS = ("mcp.log", "mcp.old.log", "mcp-server-*.log")  # names picked up when walking a folder

LEVELS = frozenset({"trace", "debug", "info", "notice", "warn", "warning", "error", "fatal", "critical"})
MARKERS = (
    b"Message from client:", b"Message from server:", b"Initializing server...", b"transport closed",
    b"Attempting to connect to MCP server", b"Connected to MCP server", b"Server started and connected successfully",
    b"Using MCP server command", b"Shutting down server",
)  # fmt: skip
MAX_NAME_CHARS = 256

_LINE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z) \[([^\]\r\n]{1,200})\](?: \[([^\]\r\n]{1,200})\])?(?: (.*))?", re.S)
_PREFIX = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z \[([^\]\r\n]{1,200})\](?: \[([^\]\r\n]{1,200})\])? ")
_METADATA_TAIL = " { metadata: undefined }"
_TRUNCATED = re.compile(r"(?:…|\.\.\.)?\[(\d{1,12}) chars truncated\](?:…|\.\.\.)?")
_SERVER_FILE = re.compile(r"mcp-server-(.+?)(?:\.old)?\.log")
_decode = msgspec.json.Decoder().decode


def default_roots() -> list[Path]:
    """Where Claude Desktop writes its logs on this machine (existing or not)."""
    roots = [Path.home() / "Library" / "Logs" / "Claude"]
    for var, sub in (("LOCALAPPDATA", "Logs"), ("APPDATA", "logs")):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]) / "Claude" / sub)
    return roots


def sniff(head: list[Any]) -> bool:
    """Desktop logs are text: no decoded JSON value is ever one of their lines."""
    return False


def sniff_prefix(first: bytes) -> bool:
    """True when the file starts with a Desktop log line and its head uses Desktop's MCP phrases."""
    m = _PREFIX.match(first)
    if not m or not ({m.group(1).lower(), (m.group(2) or b"").lower()} & {lv.encode() for lv in LEVELS}):
        return False
    return any(marker in first for marker in MARKERS)


def _server_of_file(path: str) -> str | None:
    m = _SERVER_FILE.fullmatch(PurePath(path).name)
    return m.group(1)[:MAX_NAME_CHARS] if m else None


def _split_brackets(first: str, second: str | None, rest: str) -> tuple[str | None, str]:
    """(server, message) from the one or two brackets after the timestamp, whichever order they come in."""
    if second is None:
        return (None if first.lower() in LEVELS else first), rest
    if second.lower() in LEVELS:
        return first, rest
    if first.lower() in LEVELS:
        return second, rest
    return first, f"[{second}] {rest}"  # the second bracket belongs to the message


def _label(server: str, ts: datetime | None, n: int) -> str:
    if ts is None:
        return f"{server}:{n}"
    return f"{server}@{ts.isoformat(timespec='milliseconds')}Z"


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse Claude Desktop MCP log lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    tracker = McpTracker(result, FORMAT, _label)
    file_server = _server_of_file(path)
    for line in lines:
        rule = _use_line(result, tracker, line, file_server)
        if rule is None:
            result.lines_ok += 1
        elif rule:
            result.skipped[rule] += 1
    return result


def _use_line(result: ParseResult, tracker: McpTracker, line: Line, file_server: str | None) -> str | None:
    """None when the line was used, a skip rule's name, or "" when it was recorded as a problem."""
    st = result.state
    data = line.data
    if not data.strip():
        return "blank-line"
    prefixed = _PREFIX.match(data)
    if not prefixed:
        if st.get("in_block"):
            if data[:1] in (b"}", b"]"):
                st["in_block"] = False
            return "record-continuation"
        return "raw-stderr"
    st["in_block"] = False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.decode_problem(line, exc)
        return ""
    m = _LINE.fullmatch(text)
    if m is None:
        return "desktop-notice"
    try:
        ts = utc_naive(datetime.fromisoformat(m.group(1)))
    except ValueError as exc:  # the prefix's shape, but no date (month 13)
        result.problem(line, "bad-timestamp", str(exc)[:200])
        return ""
    server, message = _split_brackets(m.group(2), m.group(3), m.group(4) or "")
    server = (server or file_server or "unknown")[:MAX_NAME_CHARS]
    if message.endswith(_METADATA_TAIL):
        message = message[: -len(_METADATA_TAIL)]
    for prefix, direction in (("Message from client: ", C2S), ("Message from server: ", S2C)):
        if message.startswith(prefix):
            return _body(result, tracker, line, message[len(prefix) :], server, direction, ts)
    if message.startswith("Initializing server"):
        tracker.open(server, None, ts)
        return None
    if "transport closed" in message:
        tracker.close(server, None, ts)
        return None
    if message.rstrip().endswith(("{", "[")):
        st["in_block"] = True  # a multi-line record (util.inspect output) follows
    return "desktop-notice"


def _body(result: ParseResult, tracker: McpTracker, line: Line, body: str, server: str, direction: str, ts: datetime | None) -> str | None:
    try:
        msg = _decode(body.encode("utf-8"))
    except msgspec.DecodeError as exc:
        markers = list(_TRUNCATED.finditer(body))
        if not markers:
            result.decode_problem(line, exc)
            return ""
        visible = _TRUNCATED.sub("", body)
        stated = len(visible) + sum(int(mk.group(1)) for mk in markers)
        return tracker.partial(line, Partial(visible, stated), server=server, direction=direction, ts=ts)
    except RecursionError:
        result.problem(line, "too-deep", "JSON nested deeper than the decoder allows")
        return ""
    cut = None
    if "chars truncated]" in body:
        # Cut inside a string, the body still parses: the markers say how much is missing.
        markers = list(_TRUNCATED.finditer(body))
        if markers:
            cut = (sum(int(mk.group(1)) for mk in markers), sum(len(mk.group(0).encode("utf-8")) for mk in markers))
    outcome = tracker.message(line, msg, server=server, direction=direction, ts=ts, cut=cut)
    if outcome == "not-jsonrpc":
        result.problem(line, "not-jsonrpc", "the message body is not a JSON-RPC 2.0 message")
        return ""
    return outcome
