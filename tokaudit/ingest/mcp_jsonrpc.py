"""MCP JSON-RPC transcripts: one message per line, bare or in a recording envelope.

Location: wherever they were recorded (``tokaudit record`` / ``python -m
tokaudit.capture`` writes them; no default folder). Names: ``*.jsonl``.

Shape. Each line is one of

* a bare JSON-RPC 2.0 message (or a batch: a JSON array of them). No
  timestamps; the server's name is the file's stem; the direction is inferred
  (a message with ``method`` is a request or notification, one with
  ``result``/``error`` a response);
* an **envelope**, the format this module defines and ``tokaudit.capture``
  writes::

    {"timestamp": "2026-03-01T09:44:53.641Z",   # ISO-8601 (naive = UTC) or epoch milliseconds
     "direction": "client_to_server",            # or server_to_client; aliases below
     "server": "filesystem",                     # optional: default the file's stem
     "connection": "filesystem-1a2b3c",          # optional connection id (string or number)
     "message": {...}}                           # the JSON-RPC message (or batch) as sent

  Direction aliases, from the client's side of the pipe: ``client_to_server``
  = ``c2s`` = ``send`` = ``sent`` = ``out`` = ``outgoing`` = ``request``;
  ``server_to_client`` = ``s2c`` = ``recv`` = ``received`` = ``in`` =
  ``incoming`` = ``response``. A missing or unknown direction is inferred as for
  bare lines. Other envelope records (same timestamp/server/connection keys):
  ``{"event": "connection-opened" | "connection-closed", "exit_code": N}``
  frame a recorded run; ``{"omitted_bytes": N, "head": "<first KiB>"}`` stands
  for a message too large to record (its ``id``/``method``/``name`` are read
  from the head, like a truncated Claude Desktop body); ``{"raw": "...",
  "raw_bytes": N}`` is a stdout line that was not JSON.

Connections and sessions. A connection is one server process/session: a new
``connection`` id, a ``connection-opened`` record, or an ``initialize`` request
on a connection that has already carried messages starts a new one (protocol
2026-07-28 has no ``initialize``: there a file, or a connection id, is one
connection). Request ids are paired per connection and per direction (the
client's id 1 and the server's id 1 are different requests). Each connection
is one session: ``mcp-jsonrpc:<connection id>`` when the envelope names one,
else ``mcp-jsonrpc:<file stem>:<n>`` (n counts connections in the file);
agent ``mcp``, ``agent_id`` = the server's name, ``agent_version`` = the
protocol version (``initialize`` result, else its request, else a request's
``_meta["io.modelcontextprotocol/protocolVersion"]``). MCP carries no token
counts, so there are no llm_calls.

Mapping (the JSON-RPC handling is ``McpTracker``, shared with ``mcp_desktop``):

* ``tools/call`` → one tool_calls row, ``tool_call_id`` = ``<connection
  label>:<JSON-RPC id>`` (``#<line>`` appended if a connection reuses an id),
  ``protocol_call_id`` = the id, ``tool_name`` = ``mcp_tool`` = ``params.name``,
  ``mcp_server`` = the server, ``tool_kind`` ``mcp``. Arguments are measured
  as compact JSON (``msgspec`` re-encoding of ``params.arguments``, key order
  kept): the same call logged by different writers gets the same size and
  ``args_sha256``; absent arguments measure 0 bytes. ``args_tokens`` and
  ``result_tokens`` come from ``tokens.count_tokens`` with their method.
* What of a result reaches the model (``result_bytes``, UTF-8): each
  ``content[]`` block's ``text``; ``image``/``audio`` the bytes of their
  base64 ``data``; an embedded ``resource`` its ``text`` or base64 ``blob``;
  ``resource_link`` and unknown blocks their compact JSON.
  ``structuredContent`` normally duplicates the text and is counted only when
  ``content`` is absent or empty (type ``json``). ``result_sha256`` hashes the
  counted parts joined by newlines; ``result_content_types`` is the sorted set
  of block types (unknown types as ``other``). ``result_tokens`` is NULL when
  a binary part (image, audio, blob) is present: the reader estimates those
  from bytes and content type.
* ``isError: true`` → ``is_error``, ``error_kind`` ``tool``. A JSON-RPC
  ``error`` response → ``is_error``, ``error_kind`` ``protocol``,
  ``error_code``; its ``message`` is the result text (content type ``error``).
* ``resultType`` other than ``complete`` (2026-07-28 ``input_required``) is
  not a final result: the row records that round (``result_content_types`` =
  the result type, 0 bytes) and an ``input-required`` event; the client's
  retry is a new request, hence its own row. A task-augmented call
  (2025-11-25: the result is ``{"task": {"taskId"}}``) stays open and takes
  its result from the later ``tasks/result`` response for that task.
* ``duration_ms`` = response time − request time (``duration_method``
  ``timestamps``); ``progress_count`` = the ``notifications/progress`` whose
  ``progressToken`` is the call's ``params._meta.progressToken``;
  ``cancelled`` from ``notifications/cancelled`` naming the call's id
  (``requestId``, matched as JSON, else as text: ``"7"`` cancels 7).
* ``tools/list`` results → tool_defs rows (one per tool and distinct
  definition within a session): ``schema_sha256`` = SHA-256 of the canonical
  JSON (keys sorted, compact, UTF-8) of the object made of the tool's
  ``description``, ``inputSchema``, ``outputSchema`` and ``annotations``
  (those present); ``description_bytes`` = UTF-8 bytes of ``description`` (0
  when absent); ``definition_bytes`` = compact JSON of the tool object less
  ``_meta`` and ``icons`` (protocol and UI metadata that hosts do not put into
  the prompt); first/last seen = the response time. A definition that changes
  mid-session gives a second row for that tool.

Unpaired messages are kept and flagged, never dropped:

* A request still unanswered when the run ends is emitted with its request
  columns and NULL result columns and kept pending in ``state``: the response
  may arrive in a later run, whose row fills the result columns (the store
  merges by ``tool_call_id``, filling NULLs). ``progress_count`` stays NULL
  until the call completes (a stored count could not be raised later). When
  the connection is known to be over (``connection-closed``, a new
  ``initialize``, Claude Desktop's "transport closed") every call still
  pending and not cancelled gets ``error_kind`` ``missing-response``. At the
  end of a file nothing is known to be over, so no call is flagged there.
* A response whose request was never seen (recording started late) is used:
  an ``orphan-response`` event at its line, plus a tool_calls row (NULL
  request columns) when it is a tool result, or tool_defs when it lists tools.

Lines. Used: initialize, tools/call, tools/list and tasks/result messages of a
tool call, matched progress and cancellation notifications,
``notifications/tools/list_changed`` (a ``tools-list-changed`` event),
connection records, orphan responses. Skipped by rule: ``blank-line``;
``request:<method>``, ``response:<method>`` and ``notification:<method>`` for
other MCP methods (ping, resources/*, prompts/*, completion/complete,
logging/setLevel, sampling/createMessage, elicitation/create, roots/list,
server/discover, tasks/*, subscriptions/listen, notifications/message, ...;
unknown methods as ``request:other`` etc.); ``progress-unmatched``,
``cancelled-unmatched``; ``non-json-message``; ``truncated-message`` (an
omitted body that cannot be tied to a tool call); ``event:other``.
Problems: ``invalid-utf8``, ``invalid-json``, ``too-deep``
(nesting past the decoder's limit), ``not-jsonrpc`` (an object that is
neither a message nor an envelope), ``bad-timestamp``.

Hostile input is bounded: names are cut to 256 characters; at most
``MAX_PENDING`` requests are kept pending per connection (the oldest are
forgotten: their rows exist, and a late response becomes an orphan), and as
many recent tool-call ids for spotting a reused id; at most
``MAX_CONNECTIONS`` connections are kept open in ``state`` (the oldest is
forgotten, unflagged).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import PurePath
from typing import Any

import msgspec

from tokaudit.ingest.base import Line, ParseResult, check_utf8, result_features, sha256_hex, utc_naive
from tokaudit.ingest.skeleton import args_skeleton, args_values
from tokaudit.ingest.tokens import count_tokens, heuristic_tokens

FORMAT = "mcp-jsonrpc"
AGENT = "mcp"
FILE_PATTERNS = ("*.jsonl",)  # names picked up when walking a folder

MAX_NAME_CHARS = 256
MAX_PENDING = 10_000
MAX_TASKS = 1_000
MAX_CONNECTIONS = 1_000  # live connections kept in state
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"

C2S, S2C = "client_to_server", "server_to_client"
DIRECTIONS = {
    **dict.fromkeys(("client_to_server", "c2s", "send", "sent", "out", "outgoing", "request"), C2S),
    **dict.fromkeys(("server_to_client", "s2c", "recv", "received", "in", "incoming", "response"), S2C),
}
# Requests a server sends to its client (their ids are the server's own).
SERVER_REQUESTS = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
# Methods tokaudit does not use but knows (skip rules name them; others are "other").
KNOWN_METHODS = frozenset(
    {
        "ping", "server/discover", "logging/setLevel", "completion/complete",
        "resources/list", "resources/read", "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
        "prompts/list", "prompts/get", "sampling/createMessage", "elicitation/create", "roots/list",
        "tasks/get", "tasks/list", "tasks/result", "tasks/cancel", "subscriptions/listen",
        "notifications/initialized", "notifications/message", "notifications/resources/updated",
        "notifications/resources/list_changed", "notifications/prompts/list_changed",
        "notifications/roots/list_changed", "notifications/tasks/status", "notifications/elicitation/complete",
    }
)  # fmt: skip
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
_DEF_HASHED = ("description", "inputSchema", "outputSchema", "annotations")
_DEF_NOT_SENT = frozenset({"_meta", "icons"})

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode


def default_roots() -> list[Any]:
    """Transcripts live wherever they were recorded: no default folder."""
    return []


# --- sniffing -----------------------------------------------------------------------------------


def _is_message(obj: Any) -> bool:
    if isinstance(obj, list):
        return bool(obj) and all(_is_message(m) for m in obj)
    return (
        isinstance(obj, dict)
        and obj.get("jsonrpc") == "2.0"
        and (isinstance(obj.get("method"), str) or ("id" in obj and ("result" in obj or "error" in obj)))
    )


def _is_envelope(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if "message" in obj:
        return _is_message(obj["message"]) or "omitted_bytes" in obj
    return (obj.get("event") in ("connection-opened", "connection-closed") or "omitted_bytes" in obj or "raw_bytes" in obj) and "timestamp" in obj


def sniff(head: list[Any]) -> bool:
    """True when every leading JSON value is a JSON-RPC 2.0 message or a recording envelope (strict)."""
    return bool(head) and all(_is_message(obj) or _is_envelope(obj) for obj in head)


_PREFIX = re.compile(rb'^[\[{]\s*(?:\{\s*)?"(?:jsonrpc"\s*:\s*"2\.0"|timestamp"\s*:\s*(?:"[^"]{0,40}"|\d{1,16})\s*,\s*"direction")')


def sniff_prefix(first: bytes) -> bool:
    """True when an over-long first line starts like a JSON-RPC message or an envelope."""
    return bool(_PREFIX.match(first))


# --- the shared JSON-RPC tracker -------------------------------------------------------------------


@dataclass
class Partial:
    """What could be read from a message body that is not whole (truncated in the log, or omitted)."""

    visible: str  # the text that is there (markers removed)
    original_bytes: int | None  # the whole body's size when the log states it (chars for Desktop, bytes for envelopes)


_SALVAGE_METHOD = re.compile(r'"method"\s*:\s*"([^"\\]{1,200})"')
_SALVAGE_ID_HEAD = re.compile(r'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_SALVAGE_ID_TAIL = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")\s*\}?\s*$')
_SALVAGE_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.){1,256})"')
_SALVAGE_IS_ERROR = re.compile(r'"isError"\s*:\s*(true|false)')
_SALVAGE_KIND = re.compile(r'"(result|error)"\s*:\s*\{')
_SALVAGE_CODE = re.compile(r'"code"\s*:\s*(-?\d{1,12})')
_SALVAGE_TYPE = re.compile(r'"type"\s*:\s*"(text|image|audio|resource_link|resource)"')
_SALVAGE_RESULT_TYPE = re.compile(r'"resultType"\s*:\s*"([A-Za-z_]{1,40})"')


def salvage(visible: str) -> dict[str, Any]:
    """Fields regexed out of a JSON-RPC body that does not parse: method, id, tool name, outcome.

    The id is taken from the head (``{"jsonrpc":"2.0","id":…``, how servers
    write responses) or the tail (``…,"id":2}``, how Claude Desktop writes
    requests); anywhere else it could be an argument's ``id``.

    Examples:
        >>> salvage('{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"abc')["id"]
        5
        >>> salvage('{"method":"tools/call","params":{"name":"read","arguments":{"p":"x"}},"jsonrpc":"2.0","id":"a"}')["name"]
        'read'
    """
    out: dict[str, Any] = {}
    m = _SALVAGE_ID_HEAD.match(visible) or _SALVAGE_ID_TAIL.search(visible[-300:])
    if m:
        try:
            out["id"] = _decode(m.group(1).encode())
        except msgspec.DecodeError:
            pass  # a malformed escape in a cut id: leave it out
    m = _SALVAGE_METHOD.search(visible)
    if m:
        out["method"] = m.group(1)
    m = _SALVAGE_NAME.search(visible)
    if m:
        out["name"] = m.group(1)
    m = _SALVAGE_KIND.search(visible)
    if m and "method" not in out:
        out["kind"] = m.group(1)
        if m.group(1) == "error":
            code = _SALVAGE_CODE.search(visible, m.end())
            out["code"] = int(code.group(1)) if code else None
    m = _SALVAGE_IS_ERROR.search(visible)
    if m:
        out["isError"] = m.group(1) == "true"
    m = _SALVAGE_RESULT_TYPE.search(visible)
    if m:
        out["resultType"] = m.group(1)
    out["types"] = sorted(set(_SALVAGE_TYPE.findall(visible)))
    return out


def _id_key(value: Any) -> str:
    """A request id as a dict key: its JSON text (1 and "1" are different ids)."""
    return _encode(value).decode()


def _id_text(value: Any) -> str:
    return value if isinstance(value, str) else _encode(value).decode()


def _name(value: Any) -> str | None:
    return value[:MAX_NAME_CHARS] if isinstance(value, str) else None


def _iso(ts: datetime | None) -> str | None:
    return ts.isoformat() if ts is not None else None


def _from_iso(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _meta(params: Any) -> dict[str, Any]:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def result_payload(result: dict[str, Any]) -> tuple[int, str, bytes, str | None]:
    """``(bytes that reach the model, content types, bytes hashed, text to count tokens of or None)``.

    Examples:
        >>> result_payload({"content": [{"type": "text", "text": "héllo"}], "structuredContent": {"r": "héllo"}})[:2]
        (6, 'text')
        >>> result_payload({"content": [{"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}]})[:2] + (None,)
        (8, 'image', None)
    """
    parts: list[bytes] = []
    texts: list[str] = []
    types: set[str] = set()
    binary = False
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        kind = kind if isinstance(kind, str) and kind in CONTENT_TYPES else "other"  # a hostile "type" may be any JSON
        types.add(kind)
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
            parts.append(block["text"].encode("utf-8", "surrogatepass"))
        elif kind in ("image", "audio") and isinstance(block.get("data"), str):
            binary = True
            parts.append(block["data"].encode("utf-8", "surrogatepass"))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and isinstance(block["resource"].get("text"), str):
            texts.append(block["resource"]["text"])
            parts.append(block["resource"]["text"].encode("utf-8", "surrogatepass"))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and isinstance(block["resource"].get("blob"), str):
            binary = True
            parts.append(block["resource"]["blob"].encode("utf-8", "surrogatepass"))
        else:
            data = _encode(block)
            texts.append(data.decode("utf-8", "replace"))
            parts.append(data)
    if not blocks and "structuredContent" in result:
        # Only when there is no content does the structured value stand for what the model reads.
        data = _encode(result["structuredContent"])
        types.add("json")
        texts.append(data.decode("utf-8", "replace"))
        parts.append(data)
    return sum(len(p) for p in parts), ",".join(sorted(types)), b"\n".join(parts), None if binary else "\n".join(texts)


def tool_def_row(session_id: str, server: str, tool: dict[str, Any], ts: datetime | None) -> dict[str, Any] | None:
    """A tool_defs row for one tool of a ``tools/list`` result (None when it has no name)."""
    name = _name(tool.get("name"))
    if name is None:
        return None
    hashed = {k: tool[k] for k in _DEF_HASHED if k in tool}
    description = tool.get("description")
    return {
        "session_id": session_id,
        "mcp_server": server,
        "tool_name": name,
        "schema_sha256": sha256_hex(_encode(hashed, order="sorted")),
        "description_bytes": len(description.encode("utf-8", "surrogatepass")) if isinstance(description, str) else 0,
        "definition_bytes": len(_encode({k: v for k, v in tool.items() if k not in _DEF_NOT_SENT})),
        "first_seen_utc": ts,
        "last_seen_utc": ts,
    }


def _method_rule(prefix: str, method: str) -> str:
    return f"{prefix}:{method if method in KNOWN_METHODS else 'other'}"


class McpTracker:
    """Pairs JSON-RPC requests and responses per connection and turns tool traffic into rows.

    Pure: it writes rows into ``result`` and keeps everything it must remember
    between runs (connections, pending requests, progress tokens) in
    ``result.state`` as JSON-serialisable values. ``label_for(server, ts, n)``
    names an unnamed connection (n = its ordinal in the file); the session id
    is ``<fmt>:<label>``. Each ``message``/``partial``/``open``/``close`` call
    returns None when the line was used, else the name of its skip rule.
    """

    def __init__(self, result: ParseResult, fmt: str, label_for: Callable[[str, datetime | None, int], str]) -> None:
        self.result = result
        self.fmt = fmt
        self.label_for = label_for
        st = result.state
        self.conns: dict[str, dict[str, Any]] = st.setdefault("conns", {})
        self.current: dict[str, str] = st.setdefault("current", {})
        self.labels: dict[str, int] = st.setdefault("labels", {})
        st.setdefault("n", 0)

    # connections -----------------------------------------------------------------------------

    def _key(self, server: str, connection: str | None) -> str:
        return f"{server}\x00{connection}" if connection is not None else self.current.get(server, "")

    def open(self, server: str, connection: str | None, ts: datetime | None) -> dict[str, Any]:
        """Start a new connection to ``server`` (closing the one it replaces)."""
        key = f"{server}\x00{connection}" if connection is not None else None
        old = self.conns.get(key) if key else self.conns.get(self.current.get(server, ""))
        if old is not None:
            self.close_conn(old, ts)
        st = self.result.state
        st["n"] += 1
        label = connection if connection is not None else self.label_for(server, ts, st["n"])
        if label in self.labels:
            label = f"{label}#{st['n']}"
        self.labels[label] = 1
        key = key or f"{server}\x00#{st['n']}"
        conn = {"key": key, "label": label, "server": server, "session": f"{self.fmt}:{label}", "fresh": True,
                "pending": {}, "tokens": {}, "ids": {}, "tasks": {}}  # fmt: skip
        self.conns[key] = conn
        if len(self.conns) > MAX_CONNECTIONS:
            # Bound the state: forget the oldest connection still open (its rows are out; nothing is flagged).
            oldest = self.conns.pop(next(iter(self.conns)))
            if self.current.get(oldest["server"]) == oldest["key"]:
                del self.current[oldest["server"]]
        if connection is None:
            self.current[server] = key
        self.result.add_session(
            {"session_id": conn["session"], "agent": AGENT, "agent_id": server, "agent_version": None, "started_at_utc": ts, "ended_at_utc": ts}
        )
        return conn

    def connection(self, server: str, connection: str | None, ts: datetime | None) -> dict[str, Any]:
        """The live connection for a message (opened on first sight), with its session widened to ``ts``."""
        conn = self.conns.get(self._key(server, connection))
        if conn is None:
            return self.open(server, connection, ts)
        if self.result.seen_session(conn["session"], ts) is None:
            self.result.add_session(
                {"session_id": conn["session"], "agent": AGENT, "agent_id": conn["server"], "started_at_utc": ts, "ended_at_utc": ts}
            )
        return conn

    def close(self, server: str, connection: str | None, ts: datetime | None) -> bool:
        """The connection is over (transport closed): flag its unanswered tool calls. False if none was open."""
        conn = self.conns.get(self._key(server, connection))
        if conn is None:
            return False
        self.connection(server, connection, ts)
        self.close_conn(conn, ts)
        return True

    def close_conn(self, conn: dict[str, Any], ts: datetime | None) -> None:
        for entry in conn["pending"].values():
            if entry.get("tc") and not entry.get("x"):
                # No response can come any more: the call's outcome is known to be missing.
                self._row(conn, entry["tc"], error_kind="missing-response", progress_count=entry.get("pc", 0))
        del self.conns[conn["key"]]
        if self.current.get(conn["server"]) == conn["key"]:
            del self.current[conn["server"]]

    def _version(self, conn: dict[str, Any], version: Any) -> None:
        if isinstance(version, str) and version:
            self.result.sessions[conn["session"]]["agent_version"] = version[:64]

    # messages --------------------------------------------------------------------------------

    def message(self, line: Line, msg: Any, *, server: str, direction: str | None, ts: datetime | None,
                connection: str | None = None, cut: tuple[int, int] | None = None) -> str | None:  # fmt: skip
        """Use one decoded JSON-RPC message (or batch); None when used, else the skip rule.

        ``cut`` = (characters the log says it removed, bytes of its visible truncation markers) for a
        body that a log cut inside a string yet still parses: its tool result is marked truncated.
        """
        if isinstance(msg, list):
            outcomes = [self.message(line, m, server=server, direction=direction, ts=ts, connection=connection, cut=cut) for m in msg]
            return None if not outcomes or None in outcomes else outcomes[0]
        if not isinstance(msg, dict):
            return "not-jsonrpc"
        method = msg.get("method")
        if isinstance(method, str):
            if "id" in msg and msg["id"] is not None:
                return self._request(line, msg, method, server, direction, ts, connection)
            return self._notification(line, msg, method, server, direction, ts, connection)
        if "id" in msg and ("result" in msg or "error" in msg):
            return self._response(line, msg, server, direction, ts, connection, cut)
        return "not-jsonrpc"

    def _request(self, line, msg, method, server, direction, ts, connection) -> str | None:
        origin = ("c" if direction == C2S else "s") if direction else ("s" if method in SERVER_REQUESTS else "c")
        conn = self.connection(server, connection, ts)
        if method == "initialize" and origin == "c" and not conn["fresh"]:
            conn = self.open(server, connection, ts)  # a re-initialize is a new connection
        conn["fresh"] = False
        params = msg.get("params")
        self._version(conn, _meta(params).get(PROTOCOL_VERSION_META))
        entry: dict[str, Any] = {"m": method, "ts": _iso(ts)}
        rule = None
        if method == "initialize" and isinstance(params, dict):
            self._version(conn, params.get("protocolVersion"))
        elif method == "tools/call" and origin == "c":
            entry["tc"] = self._tool_request(line, conn, msg["id"], params, ts)
            token = _meta(params).get("progressToken")
            if isinstance(token, (str, int, float)) and not isinstance(token, bool):
                entry["pt"] = _id_key(token)
                conn["tokens"][entry["pt"]] = f"c:{_id_key(msg['id'])}"
        elif method == "tasks/result" and origin == "c" and isinstance(params, dict) and isinstance(params.get("taskId"), str):
            task = conn["tasks"].get(params["taskId"])
            if task is None:
                rule = _method_rule("request", method)
            else:
                entry.update(task)  # the call's id and start: its result arrives with this response
        elif method != "tools/list":
            rule = _method_rule("request", method)
        self._remember(conn, f"{origin}:{_id_key(msg['id'])}", entry)
        return rule

    def _remember(self, conn: dict[str, Any], key: str, entry: dict[str, Any]) -> None:
        pending = conn["pending"]
        pending.pop(key, None)
        pending[key] = entry
        while len(pending) > MAX_PENDING:
            # Bound the state: forget the oldest (its row is already out; a late response is an orphan).
            old_key = next(iter(pending))
            old = pending.pop(old_key)
            conn["tokens"].pop(old.get("pt"), None)

    def _find(self, conn: dict[str, Any], id_value: Any, origins: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
        for origin in origins:
            for key in (f"{origin}:{_id_key(id_value)}", f"{origin}:{_id_key(_id_text(id_value))}"):
                if key in conn["pending"]:
                    return key, conn["pending"][key]
            if isinstance(id_value, str):
                # "7" names request 7 (clients echo ids as text in cancellations).
                for key, entry in conn["pending"].items():
                    if key.startswith(origin + ":") and _id_text(_decode(key[2:])) == id_value:
                        return key, entry
        return None

    def _tool_call_id(self, conn: dict[str, Any], id_value: Any, line: Line) -> str:
        tcid = f"{conn['label']}:{_id_text(id_value)}"
        if tcid in conn["ids"]:
            tcid = f"{tcid}#{line.line_no}"  # an id used twice on one connection: keep both calls apart
        conn["ids"][tcid] = 1
        if len(conn["ids"]) > MAX_PENDING:
            del conn["ids"][next(iter(conn["ids"]))]  # bounded: reuse is checked against recent ids only
        return tcid

    def _tool_request(self, line: Line, conn: dict[str, Any], id_value: Any, params: Any, ts: datetime | None) -> str:
        tcid = self._tool_call_id(conn, id_value, line)
        params = params if isinstance(params, dict) else {}
        name = _name(params.get("name"))
        row: dict[str, Any] = {"line_no": line.line_no, "ts_utc": ts, "tool_name": name, "tool_kind": "mcp",
                               "mcp_server": conn["server"], "mcp_tool": name, "call_key": None}  # fmt: skip
        if "arguments" in params:
            args = _encode(params["arguments"])
            tokens, method = count_tokens(args.decode("utf-8", "replace"))
            row.update(args_bytes=len(args), args_sha256=sha256_hex(args), args_skeleton=args_skeleton(args), args_values=args_values(args),
                       args_tokens=tokens, args_tokens_method=method)  # fmt: skip
        else:
            row.update(args_bytes=0, args_sha256=sha256_hex(b""), args_skeleton=None, args_values=None, args_tokens=0, args_tokens_method=None)
        self._row(conn, tcid, protocol_call_id=_id_text(id_value), **row)
        return tcid

    def _row(self, conn: dict[str, Any], tcid: str, **cols: Any) -> None:
        self.result.add_tool_call({"tool_call_id": tcid, "session_id": conn["session"], **cols})

    def _response(self, line, msg, server, direction, ts, connection, cut) -> str | None:
        conn = self.connection(server, connection, ts)
        conn["fresh"] = False
        origins = ("c",) if direction == S2C else ("s",) if direction == C2S else ("c", "s")
        found = self._find(conn, msg["id"], origins)
        result = msg.get("result")
        if found is None:
            return self._orphan(line, conn, msg["id"], msg, ts)
        key, entry = found
        del conn["pending"][key]
        conn["tokens"].pop(entry.get("pt"), None)
        method = entry["m"]
        if entry.get("tc"):
            if isinstance(result, dict) and isinstance(result.get("task"), dict) and "content" not in result:
                return self._task_created(line, conn, entry, result["task"], ts)
            self._tool_result(line, conn, entry, msg, ts, cut)
            return None
        if method == "initialize" and isinstance(result, dict):
            self._version(conn, result.get("protocolVersion"))
            return None
        if method == "tools/list":
            self._tool_defs(conn, result, ts)
            return None
        return _method_rule("response", method)

    def _task_created(self, line: Line, conn: dict[str, Any], entry: dict[str, Any], task: dict[str, Any], ts: datetime | None) -> str | None:
        task_id = task.get("taskId")
        if isinstance(task_id, str) and len(conn["tasks"]) < MAX_TASKS:
            conn["tasks"][task_id[:MAX_NAME_CHARS]] = {k: entry[k] for k in ("tc", "ts", "pc") if k in entry}
        self.result.add_event({"line_no": line.line_no, "session_id": conn["session"], "ts_utc": ts, "kind": "task-created",
                               "detail": f"tool_call_id={entry['tc']}"})  # fmt: skip
        return None

    def _tool_result(self, line: Line, conn: dict[str, Any], entry: dict[str, Any], msg: dict[str, Any], ts: datetime | None,
                     cut: tuple[int, int] | None) -> None:  # fmt: skip
        cols = self._outcome(line, conn, msg, entry["tc"], ts)
        if cut is not None and cols.get("result_bytes"):
            # The log cut the text in place: the model saw the whole of it, so size it as stated.
            stated, marker_bytes = cut
            size = max(0, cols["result_bytes"] - marker_bytes) + stated
            if cols.get("result_tokens") is not None:
                cols["result_tokens"] = round(cols["result_tokens"] * size / cols["result_bytes"])
                cols["result_tokens_method"] += "+scaled-from-truncated"
            cols.update(result_bytes=size, result_sha256=None, result_truncated=True)
        for task_id, task in list(conn["tasks"].items()):
            if task.get("tc") == entry["tc"]:
                del conn["tasks"][task_id]
        self._finish(conn, entry, ts, cols)

    def _finish(self, conn: dict[str, Any], entry: dict[str, Any], ts: datetime | None, cols: dict[str, Any]) -> None:
        started = _from_iso(entry.get("ts"))
        if started is not None and ts is not None:
            cols["duration_ms"] = max(0, round((ts - started) / timedelta(milliseconds=1)))
            cols["duration_method"] = "timestamps"
        cols.setdefault("progress_count", entry.get("pc", 0))
        cols.setdefault("cancelled", bool(entry.get("x")))
        self._row(conn, entry["tc"], **cols)

    def _outcome(self, line: Line, conn: dict[str, Any], msg: dict[str, Any], tcid: str, ts: datetime | None) -> dict[str, Any]:
        """Result columns of a complete response to a tools/call."""
        cols: dict[str, Any] = {"result_line_no": line.line_no, "result_ts_utc": ts, "result_truncated": False}
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {}
            text = err.get("message") if isinstance(err.get("message"), str) else ""
            data = text.encode("utf-8", "surrogatepass")
            code = err.get("code")
            tokens, method = count_tokens(text)
            cols.update(result_features(data))
            cols.update(result_bytes=len(data), result_sha256=sha256_hex(data), result_content_types="error", is_error=True,
                        error_kind="protocol", error_code=code if isinstance(code, int) and -(2**63) <= code < 2**63 else None,
                        result_tokens=tokens, result_tokens_method=method)  # fmt: skip
            return cols
        result = msg["result"] if isinstance(msg.get("result"), dict) else {}
        result_type = result.get("resultType")
        if isinstance(result_type, str) and result_type != "complete":
            # Not the call's final result (2026-07-28 input_required): the client retries with a new request.
            kind = re.sub(r"[^a-z_]", "", result_type.lower())[:40] or "other"
            self.result.add_event({"line_no": line.line_no, "session_id": conn["session"], "ts_utc": ts,
                                   "kind": "input-required" if kind == "input_required" else "non-final-result",
                                   "detail": f"tool_call_id={tcid}"})  # fmt: skip
            cols.update(result_bytes=0, result_sha256=sha256_hex(b""), result_content_types=kind, is_error=False,
                        result_tokens=0, result_tokens_method=None)  # fmt: skip
            return cols
        size, types, hashed, text = result_payload(result)
        is_error = result.get("isError") is True
        tokens, method = count_tokens(text) if text is not None else (None, None)
        cols.update(result_bytes=size, result_sha256=sha256_hex(hashed), result_content_types=types or None, is_error=is_error,
                    error_kind="tool" if is_error else None, result_tokens=tokens, result_tokens_method=method)  # fmt: skip
        if text is not None:
            cols.update(result_features(text.encode("utf-8", "surrogatepass")))
        return cols

    def _orphan(self, line: Line, conn: dict[str, Any], id_value: Any, msg: dict[str, Any], ts: datetime | None) -> str | None:
        """A response to a request never seen: keep what it says, flagged by an event."""
        result = msg.get("result")
        detail = f"id={_id_text(id_value)[:80]}"
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            self._tool_defs(conn, result, ts)
            detail += " tools/list"
        elif "error" in msg or (isinstance(result, dict) and ("content" in result or "isError" in result or "structuredContent" in result)):
            tcid = self._tool_call_id(conn, id_value, line)
            cols = self._outcome(line, conn, msg, tcid, ts)
            self._row(conn, tcid, protocol_call_id=_id_text(id_value), tool_kind="mcp", mcp_server=conn["server"], **cols)
            detail += f" tool_call_id={tcid}"
        self.result.add_event({"line_no": line.line_no, "session_id": conn["session"], "ts_utc": ts, "kind": "orphan-response", "detail": detail})
        return None

    def _tool_defs(self, conn: dict[str, Any], result: Any, ts: datetime | None) -> None:
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            row = tool_def_row(conn["session"], conn["server"], tool, ts) if isinstance(tool, dict) else None
            if row is not None:
                self.result.add_tool_def(row)

    def _notification(self, line, msg, method, server, direction, ts, connection) -> str | None:
        conn = self.connection(server, connection, ts)
        conn["fresh"] = False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            key = conn["tokens"].get(_id_key(token)) if isinstance(token, (str, int, float)) else None
            entry = conn["pending"].get(key) if key else None
            if entry is None:
                return "progress-unmatched"
            entry["pc"] = entry.get("pc", 0) + 1
            return None
        if method == "notifications/cancelled":
            origins = ("c",) if direction == C2S else ("s",) if direction == S2C else ("c", "s")
            found = self._find(conn, params.get("requestId"), origins) if "requestId" in params else None
            if found is None:
                return "cancelled-unmatched"
            _key, entry = found
            entry["x"] = 1
            if entry.get("tc"):
                # A cancelled request gets no response (spec: SHOULD NOT): its progress is final now.
                self._row(conn, entry["tc"], cancelled=True, progress_count=entry.get("pc", 0))
            return None
        if method == "notifications/tools/list_changed":
            self.result.add_event({"line_no": line.line_no, "session_id": conn["session"], "ts_utc": ts, "kind": "tools-list-changed", "detail": None})
            return None
        return _method_rule("notification", method)

    def partial(self, line: Line, part: Partial, *, server: str, direction: str | None, ts: datetime | None,
                connection: str | None = None) -> str | None:  # fmt: skip
        """Use a message whose body is incomplete: tie a truncated tool result to its call, or skip it."""
        fields = salvage(part.visible)
        conn = self.connection(server, connection, ts)
        if "id" not in fields:
            return "truncated-message"
        if "method" in fields:
            if fields["method"] != "tools/call" or direction == S2C:
                return "truncated-message"
            # A request too large to log whole: its arguments are unknown, but the call is not lost.
            conn["fresh"] = False
            tcid = self._tool_call_id(conn, fields["id"], line)
            name = _name(fields.get("name"))
            self._row(conn, tcid, line_no=line.line_no, ts_utc=ts, tool_name=name, tool_kind="mcp", mcp_server=server, mcp_tool=name,
                      call_key=None, protocol_call_id=_id_text(fields["id"]))  # fmt: skip
            self._remember(conn, f"c:{_id_key(fields['id'])}", {"m": "tools/call", "ts": _iso(ts), "tc": tcid})
            return None
        found = self._find(conn, fields["id"], ("c",))
        if found is None or not found[1].get("tc"):
            return "truncated-message"
        key, entry = found
        del conn["pending"][key]
        conn["tokens"].pop(entry.get("pt"), None)
        self._finish(conn, entry, ts, self._truncated_outcome(line, part, fields, ts))
        return None

    def _truncated_outcome(self, line: Line, part: Partial, fields: dict[str, Any], ts: datetime | None) -> dict[str, Any]:
        visible = part.visible.encode("utf-8", "surrogatepass")
        size = part.original_bytes if part.original_bytes is not None else len(visible)
        cols: dict[str, Any] = {"result_line_no": line.line_no, "result_ts_utc": ts, "result_truncated": True,
                                "result_bytes": size, "result_sha256": None}  # fmt: skip
        if fields.get("kind") == "error":
            cols.update(is_error=True, error_kind="protocol", error_code=fields.get("code"), result_content_types="error")
        else:
            is_error = fields.get("isError")
            cols.update(is_error=is_error, error_kind="tool" if is_error else None, result_content_types=",".join(fields["types"]) or None)
        if visible and part.original_bytes:
            # Tokens of the visible part, scaled to the stated size; the label says how it was made.
            tokens, method = count_tokens(part.visible)
            cols.update(result_tokens=round(tokens * part.original_bytes / len(visible)), result_tokens_method=f"{method}+scaled-from-truncated")
        else:
            cols.update(result_tokens=heuristic_tokens(size), result_tokens_method="heuristic:bytes/4")
        return cols


# --- the transcript format ----------------------------------------------------------------------


def parse_timestamp(value: Any) -> datetime | None:
    """An envelope timestamp (ISO-8601 string, naive = UTC, or epoch milliseconds) as naive UTC.

    Raises ValueError for a value that is neither.

    Examples:
        >>> parse_timestamp("2026-03-01T09:44:53.641Z"), parse_timestamp(1772358293641)
        (datetime.datetime(2026, 3, 1, 9, 44, 53, 641000), datetime.datetime(2026, 3, 1, 9, 44, 53, 641000))
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("a boolean is not a timestamp")
    if isinstance(value, (int, float)):
        try:
            return datetime(1970, 1, 1) + timedelta(milliseconds=value)
        except OverflowError:
            raise ValueError(f"epoch milliseconds out of range: {value}") from None
    if isinstance(value, str):
        return utc_naive(datetime.fromisoformat(value))
    raise ValueError(f"a {type(value).__name__} is not a timestamp")


def parse(lines: Iterable[Line], *, path: str, state: dict[str, Any] | None = None) -> ParseResult:
    """Parse MCP JSON-RPC transcript lines into canonical rows (see module docstring)."""
    result = ParseResult(state=dict(state or {}))
    stem = PurePath(path).name.removesuffix(".jsonl")[:MAX_NAME_CHARS] or "transcript"
    tracker = McpTracker(result, FORMAT, lambda server, ts, n: f"{stem}:{n}")
    for line in lines:
        if not line.data.strip():
            result.skipped["blank-line"] += 1
            continue
        try:
            check_utf8(line.data)
            obj = _decode(line.data)
        except (UnicodeDecodeError, msgspec.DecodeError) as exc:
            result.decode_problem(line, exc)
            continue
        except RecursionError:
            result.problem(line, "too-deep", "JSON nested deeper than the decoder allows")
            continue
        _use_line(result, tracker, line, obj, stem)
    return result


def _use_line(result: ParseResult, tracker: McpTracker, line: Line, obj: Any, stem: str) -> None:
    if _is_message(obj) or (isinstance(obj, dict) and "jsonrpc" in obj and "message" not in obj):
        outcome = tracker.message(line, obj, server=stem, direction=None, ts=None)
    elif isinstance(obj, dict) and any(k in obj for k in ("message", "event", "omitted_bytes", "raw", "raw_bytes")):
        try:
            ts = parse_timestamp(obj.get("timestamp"))
        except ValueError as exc:
            result.problem(line, "bad-timestamp", str(exc)[:200])
            return
        outcome = _envelope(tracker, line, obj, stem, ts)
    else:
        outcome = "not-jsonrpc"
    if outcome == "not-jsonrpc":
        result.problem(line, "not-jsonrpc", "neither a JSON-RPC 2.0 message nor a recording envelope")
    elif outcome is None:
        result.lines_ok += 1
    else:
        result.skipped[outcome] += 1


def _envelope(tracker: McpTracker, line: Line, obj: dict[str, Any], stem: str, ts: datetime | None) -> str | None:
    server = _name(obj.get("server")) or stem
    connection = obj.get("connection")
    connection = _name(connection) if isinstance(connection, str) else str(connection) if isinstance(connection, int) else None
    direction = DIRECTIONS.get(obj["direction"]) if isinstance(obj.get("direction"), str) else None
    if "message" in obj:
        return tracker.message(line, obj["message"], server=server, direction=direction, ts=ts, connection=connection)
    if "omitted_bytes" in obj:
        size = obj["omitted_bytes"] if isinstance(obj["omitted_bytes"], int) and obj["omitted_bytes"] >= 0 else None
        head = obj.get("head") if isinstance(obj.get("head"), str) else ""
        return tracker.partial(line, Partial(head, size), server=server, direction=direction, ts=ts, connection=connection)
    if "raw" in obj or "raw_bytes" in obj:
        return "non-json-message"
    event = obj.get("event")
    if event == "connection-opened":
        tracker.open(server, connection, ts)
        return None
    if event == "connection-closed":
        tracker.close(server, connection, ts)
        return None
    return "event:other"
