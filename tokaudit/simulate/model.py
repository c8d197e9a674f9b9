"""The accounting core of the simulator: one agent session as a sequence of billed requests.

``Sim`` is a pure builder (no I/O): families call ``user``, ``request``,
``result``, ``compact``, ``subagent`` and the MCP helpers, and ``Sim`` keeps the
books the way a real Claude Code session does, so that a detector calibrated
on it meets the same arithmetic it will meet in real logs:

* **Input.** The prompt of request *t* is everything before it:
  ``input_total_t = input_total_{t-1} + output_{t-1} + added_t``, where
  ``added_t`` is the tool results, user text and per-block framing that
  arrived since request *t-1*. The first request reads the system prompt, the
  tool definitions (builtin plus every connected MCP server's, the "menu
  tax") and the first prompt.
* **Cache.** Claude Code marks the end of the conversation for caching, so
  request *t* reads request *t-1*'s whole input from the cache and writes the
  new suffix (``output_{t-1} + added_t``) minus a few uncached tokens. The
  cache lives ``ttl_ms`` (5 minutes, or 1 hour for sessions with the 1-hour
  TTL) after its last use: after a longer pause the whole prompt is written
  again (sometimes the shared system/tool prefix is still warm from another
  session). A changed tool surface invalidates everything, because the tool
  definitions come first in the prompt.
* **Output** = thinking tokens (billed in full; the log keeps a short
  summary, as Claude 4 models return summarised thinking) + visible text +
  the tool_use arguments the model generated (``tokens_of`` of their compact
  JSON, plus a little framing per block).
* **Compaction.** When the context passes ``compact_at_tokens`` the session is
  compacted: a ``compact_boundary`` line, a summary prompt, and the context
  restarts from the system prefix plus the summary. The summarising request
  itself is not written to the transcript by Claude Code, so it is not billed
  here either (the log is what tokaudit can see).
* **Time.** A request takes a time-to-first-token that grows with the prompt,
  then a per-output-token time that depends on the model; each content block
  is written when it finishes streaming. Tools take their own durations.

Tokens are ``bytes / 4`` of the text actually written (``text.tokens_of``),
so a reader that re-estimates from the log's text lands near the reported
usage. Version ≥ 2.1.97 lines carry the final usage and stop_reason on every
content-block line (no streaming placeholders).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import msgspec

from tokaudit.simulate.text import agent_id, msg_id, request_id, ri, sentence, signature, tokens_of, tool_use_id

_encode = msgspec.json.encode

RESULT_FRAMING_TOKENS = 9  # tool_result block wrapper and id, per result
PROMPT_FRAMING_TOKENS = 5  # user turn wrapper
TOOL_USE_FRAMING_TOKENS = 8  # tool name, id and block wrapper generated with the arguments
TTL_5M_MS = 5 * 60 * 1000
TTL_1H_MS = 60 * 60 * 1000

# Milliseconds per output token while streaming, by model family (rough public throughput figures).
MS_PER_OUTPUT_TOKEN = {"opus": 22.0, "sonnet": 14.0, "haiku": 6.0}


def model_family(model: str) -> str:
    """``opus`` | ``sonnet`` | ``haiku`` from a model id.

    Examples:
        >>> model_family("claude-haiku-4-5-20251001")
        'haiku'
    """
    for name in ("opus", "haiku"):
        if name in model:
            return name
    return "sonnet"


@dataclass
class ToolUse:
    """One tool_use block: what the model asked for, and the result it got back."""

    id: str
    name: str
    input: dict[str, Any]
    input_json: bytes  # compact JSON, written identically to the Claude log and the MCP transcript
    tokens: int
    line_ms: int = 0
    result: ToolResult | None = None

    @property
    def mcp(self) -> tuple[str, str] | None:
        if not self.name.startswith("mcp__"):
            return None
        server, _, tool = self.name[5:].partition("__")
        return server, tool


@dataclass
class Block:
    kind: str  # thinking | text | tool_use
    tokens: int
    text: str = ""
    tool: ToolUse | None = None
    signature: str = ""
    line_ms: int = 0


@dataclass
class Usage:
    input_tokens: int
    cache_read_tokens: int
    cache_write_5m_tokens: int
    cache_write_1h_tokens: int
    output_tokens: int

    @property
    def input_total_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_5m_tokens + self.cache_write_1h_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_total_tokens + self.output_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_5m_tokens": self.cache_write_5m_tokens,
            "cache_write_1h_tokens": self.cache_write_1h_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class Request:
    """One billed model request (one ``message.id``/``requestId``; one log line per block)."""

    index: int
    start_ms: int
    end_ms: int
    model: str
    message_id: str
    request_id: str
    blocks: list[Block]
    usage: Usage
    stop_reason: str
    phase: str  # benign | attack: which part of the family's script asked for it

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [b.tool for b in self.blocks if b.tool is not None]


@dataclass
class ToolResult:
    ts_ms: int
    tool_use: ToolUse
    text: str
    is_error: bool = False
    tool_use_result: Any = None  # Claude Code's ``toolUseResult`` (UI data, not sent to the model); None: the writer derives it
    as_blocks: bool = False  # content as a list of text blocks (MCP tools, Task) rather than a string


@dataclass
class Prompt:
    ts_ms: int
    text: str
    kind: str = "prompt"  # prompt | compact_summary


@dataclass
class Compaction:
    ts_ms: int
    pre_tokens: int


@dataclass
class SubagentRun:
    sim: Sim
    agent_id: str
    agent_type: str


@dataclass
class McpCall:
    request_ms: int
    response_ms: int
    tool: str
    input_json: bytes
    text: str
    is_error: bool


@dataclass
class McpListing:
    ts_ms: int
    tools: list[dict[str, Any]]
    changed: bool = False  # announced by notifications/tools/list_changed


@dataclass
class McpServer:
    """One MCP server as the session's client saw it: its tool surface over time and its calls."""

    name: str
    version: str
    connection: str
    opened_ms: int
    tools: list[dict[str, Any]]
    records: list[McpCall | McpListing] = field(default_factory=list)
    closed_ms: int | None = None

    @property
    def calls(self) -> list[McpCall]:
        return [r for r in self.records if isinstance(r, McpCall)]


def tool_def_tokens(server: str, tool: dict[str, Any]) -> int:
    """Prompt tokens of one MCP tool definition as the agent presents it to the model."""
    shown = {"name": f"mcp__{server}__{tool['name']}", "description": tool.get("description", ""), "input_schema": tool.get("inputSchema", {})}
    return tokens_of(_encode(shown).decode()) + 6


@dataclass
class SessionSpec:
    """What stays fixed over a session (and its benign twin)."""

    session_uuid: str
    cwd: str
    version: str
    git_branch: str
    model: str
    start_ms: int
    system_prefix_tokens: int  # system prompt + builtin tool definitions + CLAUDE.md
    ttl_ms: int = TTL_5M_MS
    thinking: bool = False
    warm_prefix_prob: float = 0.6  # chance the system prefix is still cached from another session
    compact_at_tokens: int = 160_000
    # Where the model narrates each MCP call in an argument of its own ("explanation", as some clients
    # and servers ask for: new words every call): "first" or "last" key, or None for no narration.
    narration: str | None = None


class Sim:
    """Builds one session's requests, results and MCP traffic with consistent token and time accounting."""

    def __init__(self, spec: SessionSpec, noise: random.Random) -> None:
        self.spec = spec
        self.noise = noise  # ids, jitter and latency; content randomness belongs to the families
        # Narration draws its own words, so a session and its benign twin narrate alike and no other draw moves.
        self.narration_rng = random.Random(f"{spec.session_uuid}:narration")
        self.model = spec.model
        self.agent: SubagentRun | None = None  # set on a subagent's Sim
        self.events: list[Prompt | Request | ToolResult | Compaction | SubagentRun] = []
        self.requests: list[Request] = []
        self.servers: dict[str, McpServer] = {}
        self.now_ms = spec.start_ms
        self.phase = "benign"
        self.prefix_tokens = spec.system_prefix_tokens  # system + tool definitions, grows with MCP servers
        self.context_tokens = 0  # conversation after the prefix, as of the last request (input + its output)
        self.pending_tokens = 0  # added since the last request
        self.cached_tokens = spec.system_prefix_tokens if noise.random() < spec.warm_prefix_prob else 0
        self.last_cache_ms: int | None = spec.start_ms if self.cached_tokens else None
        self.compactions = 0
        self.subagents: list[SubagentRun] = []

    # --- conversation ---------------------------------------------------------------------------

    def wait(self, ms: int) -> None:
        """Let time pass (the user reading, a sleep between polls, a slow tool)."""
        self.now_ms += max(0, int(ms))

    def user(self, text: str, *, think_ms: int | None = None) -> Prompt:
        """A user prompt (the first one opens the session)."""
        self.wait(think_ms if think_ms is not None else ri(self.noise, 2_000, 20_000))
        prompt = Prompt(self.now_ms, text)
        self.events.append(prompt)
        self.pending_tokens += tokens_of(text) + PROMPT_FRAMING_TOKENS
        self.wait(ri(self.noise, 30, 400))
        return prompt

    def thinking(self, tokens: int, rng: random.Random) -> Block:
        """A thinking block billed at ``tokens``; the log keeps a summary of at most ~300 tokens."""
        return Block("thinking", tokens, text=sentence(rng, min(tokens, 300)), signature=signature(self.noise))

    def text(self, text: str) -> Block:
        return Block("text", tokens_of(text) + 1, text=text)

    def tool(self, name: str, args: dict[str, Any]) -> Block:
        data = _encode(args)
        use = ToolUse(tool_use_id(self.noise), name, args, data, -(-len(data) // 4) + TOOL_USE_FRAMING_TOKENS)
        return Block("tool_use", use.tokens, tool=use)

    def request(self, blocks: list[Block], *, gap_ms: int | None = None) -> Request:
        """A billed model request producing ``blocks``; usage follows the module docstring's rules."""
        self.wait(gap_ms if gap_ms is not None else ri(self.noise, 15, 250))
        start = self.now_ms
        prefix_input = self.prefix_tokens + self.context_tokens
        input_total = prefix_input + self.pending_tokens
        ttl_expired = self.last_cache_ms is None or start - self.last_cache_ms > self.spec.ttl_ms
        if ttl_expired and self.cached_tokens:
            # The conversation's cache entry is gone; the shared system prefix may survive elsewhere.
            self.cached_tokens = self.spec.system_prefix_tokens if self.noise.random() < 0.3 else 0
        uncached = ri(self.noise, 1, 6) if self.cached_tokens else ri(self.noise, 3, 12)
        uncached = min(uncached, input_total)
        cache_read = min(self.cached_tokens, input_total - uncached)
        write = input_total - cache_read - uncached
        write_1h = write if self.spec.ttl_ms == TTL_1H_MS else 0
        output = sum(b.tokens for b in blocks)
        usage = Usage(uncached, cache_read, write - write_1h, write_1h, output)
        # Timing: first token after a prompt-size-dependent delay, then per-token streaming.
        ms_per_token = MS_PER_OUTPUT_TOKEN[model_family(self.model)] * self.noise.uniform(0.8, 1.25)
        t = start + ri(self.noise, 600, 2200) + input_total // 400
        for block in blocks:
            t += int(block.tokens * ms_per_token) + ri(self.noise, 5, 60)
            block.line_ms = t
            if block.tool is not None:
                block.tool.line_ms = t
        has_tools = any(b.tool is not None for b in blocks)
        req = Request(
            index=len(self.requests),
            start_ms=start,
            end_ms=t,
            model=self.model,
            message_id=msg_id(self.noise),
            request_id=request_id(self.noise),
            blocks=blocks,
            usage=usage,
            stop_reason="tool_use" if has_tools else "end_turn",
            phase=self.phase,
        )
        self.requests.append(req)
        self.events.append(req)
        self.context_tokens = input_total - self.prefix_tokens + output
        self.pending_tokens = 0
        self.cached_tokens = input_total
        self.last_cache_ms = start
        self.now_ms = t
        return req

    def result(self, use: ToolUse, text: str, *, duration_ms: int | None = None, is_error: bool = False,
               tool_use_result: Any = None, as_blocks: bool | None = None) -> ToolResult:  # fmt: skip
        """The result of ``use`` arriving ``duration_ms`` after its tool_use line was written."""
        duration = duration_ms if duration_ms is not None else ri(self.noise, 20, 400)
        ts = max(use.line_ms + max(1, int(duration)), self.now_ms + 1)
        blocks = as_blocks if as_blocks is not None else use.mcp is not None
        res = ToolResult(ts, use, text, is_error, tool_use_result, blocks)
        use.result = res
        self.events.append(res)
        self.pending_tokens += tokens_of(text) + RESULT_FRAMING_TOKENS
        self.now_ms = ts
        mcp = use.mcp
        if mcp is not None and mcp[0] in self.servers:
            server = self.servers[mcp[0]]
            sent = use.line_ms + ri(self.noise, 3, 40)
            answered = max(sent + 1, ts - ri(self.noise, 2, 25))
            server.records.append(McpCall(sent, answered, mcp[1], use.input_json, text, is_error))
        return res

    def step(self, blocks: list[Block], results: list[tuple[str, dict[str, Any]]] | None = None, **kw: Any) -> Request:
        """A request, then the results of its tool_use blocks in order.

        ``results`` holds, per tool_use block, ``(text, options for result())``.
        """
        req = self.request(blocks, **kw)
        for use, (text, opts) in zip(req.tool_uses, results or []):
            self.result(use, text, **opts)
        return req

    # --- compaction and subagents ----------------------------------------------------------------

    @property
    def window_tokens(self) -> int:
        """Tokens the next request would read before its own additions' framing."""
        return self.prefix_tokens + self.context_tokens + self.pending_tokens

    def needs_compaction(self) -> bool:
        return self.window_tokens > self.spec.compact_at_tokens

    def compact(self, summary: str) -> None:
        """Auto-compaction: a boundary line, the summary as a prompt, the context restarted."""
        self.wait(ri(self.noise, 15_000, 60_000))  # the (unlogged) summarising request
        self.events.append(Compaction(self.now_ms, self.window_tokens))
        self.compactions += 1
        self.context_tokens = 0
        self.pending_tokens = tokens_of(summary) + PROMPT_FRAMING_TOKENS
        # Only the system/tool prefix can still be read from the cache.
        self.cached_tokens = min(self.cached_tokens, self.prefix_tokens)
        self.wait(ri(self.noise, 50, 400))
        self.events.append(Prompt(self.now_ms, summary, kind="compact_summary"))

    def subagent(self, agent_type: str, model: str, prompt: str, system_prefix_tokens: int) -> Sim:
        """Start a subagent (Task/Agent tool) whose requests go to its own transcript."""
        run_id = agent_id(self.noise)
        spec = SessionSpec(
            session_uuid=self.spec.session_uuid,
            cwd=self.spec.cwd,
            version=self.spec.version,
            git_branch=self.spec.git_branch,
            model=model,
            start_ms=self.now_ms + ri(self.noise, 200, 1500),
            system_prefix_tokens=system_prefix_tokens,
            ttl_ms=self.spec.ttl_ms,
            thinking=False,
            warm_prefix_prob=0.8,
        )
        child = Sim(spec, self.noise)
        run = SubagentRun(child, run_id, agent_type)
        child.agent = run
        child.phase = self.phase
        child.user(prompt, think_ms=0)
        self.subagents.append(run)
        self.events.append(run)
        return child

    def join(self, child: Sim) -> None:
        """The subagent finished: the parent's clock moves to its end."""
        self.now_ms = max(self.now_ms, child.now_ms)

    # --- MCP -------------------------------------------------------------------------------------

    def connect(self, name: str, tools: list[dict[str, Any]], version: str = "1.0.0") -> McpServer:
        """Connect an MCP server at session start: its tool definitions join the prompt prefix."""
        connection = f"{name}-{self.spec.session_uuid.replace('-', '')[:12]}"
        server = McpServer(name, version, connection, self.spec.start_ms - ri(self.noise, 300, 3000), list(tools))
        server.records.append(McpListing(server.opened_ms + ri(self.noise, 40, 400), list(tools)))
        self.servers[name] = server
        self.prefix_tokens += sum(tool_def_tokens(name, t) for t in tools)
        return server

    def change_tools(self, name: str, tools: list[dict[str, Any]]) -> None:
        """The server announces a new tool surface mid-session (rug pull): the prompt cache is lost."""
        server = self.servers[name]
        before = sum(tool_def_tokens(name, t) for t in server.tools)
        after = sum(tool_def_tokens(name, t) for t in tools)
        self.wait(ri(self.noise, 50, 900))
        server.records.append(McpListing(self.now_ms, list(tools), changed=True))
        server.tools = list(tools)
        self.prefix_tokens += after - before
        self.cached_tokens = 0  # tool definitions sit first in the prompt: nothing after them matches

    def close(self) -> None:
        """End of session: close MCP connections a moment after the last line."""
        for server in self.servers.values():
            server.closed_ms = self.now_ms + ri(self.noise, 500, 5000)

    # --- totals ----------------------------------------------------------------------------------

    def totals(self) -> Usage:
        u = Usage(0, 0, 0, 0, 0)
        for r in self.requests:
            u.input_tokens += r.usage.input_tokens
            u.cache_read_tokens += r.usage.cache_read_tokens
            u.cache_write_5m_tokens += r.usage.cache_write_5m_tokens
            u.cache_write_1h_tokens += r.usage.cache_write_1h_tokens
            u.output_tokens += r.usage.output_tokens
        return u
