"""How a benign coding agent behaves: Claude Code's builtin tools, their results, and common moves.

``Agent`` wraps a ``Sim`` and one content RNG. A family that must keep a
benign twin identical to its attacked session uses two agents: one on the
benign RNG (whatever both versions do) and one on the attack RNG (whatever
only the attacked version does), so the benign draws line up in both.

Result texts and ``toolUseResult`` objects follow real Claude Code 2.1.x
lines (``Read`` numbers lines with ``→``, ``Bash`` failures are ``is_error``
with an ``Error: Exit code N`` toolUseResult, ``Task`` results carry the
subagent's usage, …). Sizes are drawn from long-tailed ranges.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tokaudit.simulate.model import Block, Request, Sim
from tokaudit.simulate.text import CODE_NUMBERED, CODE_RAW, PROSE, REL_PATHS, TEST_OUTPUT, cut, pick, ri, sentence

READ_REMINDER = (
    "\n\n<system-reminder>\nWhen reading a file, consider whether it looks malicious. You may analyse such code, but "
    "refuse to improve or extend it.\n</system-reminder>\n"
)
TODO_ACK = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. "
    "Please proceed with the current tasks if applicable"
)
COMPACT_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. The conversation is "
    "summarized below:\nAnalysis:\n"
)


@dataclass
class Call:
    """A tool_use block and the result it will get."""

    block: Block
    text: str
    opts: dict[str, Any] = field(default_factory=dict)


UI_TEXT_CHARS = 1024


def _ui(text: str) -> str:
    """A string as kept in ``toolUseResult``: cut to ``UI_TEXT_CHARS``.

    ``toolUseResult`` is what Claude Code's UI shows; it never reaches the model and tokaudit reads
    only its duration. Real files repeat whole outputs there; the simulator keeps the shape and
    the first KiB, which halves the bytes a corpus takes without changing any token count.
    """
    return text if len(text) <= UI_TEXT_CHARS else text[:UI_TEXT_CHARS]


def _lines(text: str) -> str:
    """Trim a cut to whole lines."""
    first = text.find("\n")
    last = text.rfind("\n")
    return text[first + 1 : last + 1] if 0 <= first < last else text


def log_uniform(rng: random.Random, lo: float, hi: float) -> int:
    """An integer between ``lo`` and ``hi``, uniform on a log scale (long-tailed sizes)."""
    return int(round(lo * (hi / lo) ** rng.random()))


class Agent:
    def __init__(self, sim: Sim, rng: random.Random) -> None:
        self.sim = sim
        self.rng = rng
        self.root = sim.spec.cwd

    # --- blocks -----------------------------------------------------------------------------------

    def think(self, lo: int = 40, hi: int = 600, p: float = 0.85) -> list[Block]:
        if not self.sim.spec.thinking or self.rng.random() > p:
            return []
        return [self.sim.thinking(log_uniform(self.rng, lo, hi), self.rng)]

    def say(self, lo: int = 8, hi: int = 60, p: float = 0.5) -> list[Block]:
        if self.rng.random() > p:
            return []
        return [self.sim.text(sentence(self.rng, log_uniform(self.rng, lo, hi)))]

    def path(self) -> str:
        return f"{self.root}/{pick(self.rng, REL_PATHS)}"

    # --- builtin tools ------------------------------------------------------------------------------

    def read(self, path: str | None = None, tokens: int | None = None) -> Call:
        path = path or self.path()
        body = _lines(cut(CODE_NUMBERED, self.rng, tokens or log_uniform(self.rng, 150, 4000)))
        n = body.count("\n")
        text = body + (READ_REMINDER if self.rng.random() < 0.7 else "")
        tur = {"type": "text", "file": {"filePath": path, "content": _ui(cut(CODE_RAW, self.rng, len(body) // 4)), "numLines": n,
                                        "startLine": 1, "totalLines": n + ri(self.rng, 0, 40)}}  # fmt: skip
        return Call(self.sim.tool("Read", {"file_path": path}), text, {"duration_ms": ri(self.rng, 4, 90), "tool_use_result": tur})

    def grep(self) -> Call:
        word = pick(self.rng, REL_PATHS).split("/")[0].split(".")[0]
        pattern = pick(self.rng, ("def {w}", "class {W}", "{w}_client", "TODO", "import {w}", "raise {W}Error", r"{w}\(")).format(w=word, W=word.title())
        files = [f"{self.root}/{p}" for p in self.rng.sample(REL_PATHS, ri(self.rng, 1, 25))]
        if self.rng.random() < 0.6:
            args = {"pattern": pattern, "path": self.root, "output_mode": "files_with_matches"}
            text = f"Found {len(files)} files\n" + "\n".join(files)
            tur: Any = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        else:
            args = {"pattern": pattern, "path": self.root, "output_mode": "content", "-n": True}
            text = "\n".join(f"{f}:{ri(self.rng, 1, 500)}:{_lines(cut(CODE_RAW, self.rng, 30)).split(chr(10))[0]}" for f in files)
            tur = {"mode": "content", "numFiles": len(files), "filenames": [], "content": _ui(text), "numLines": len(files)}
        return Call(self.sim.tool("Grep", args), text, {"duration_ms": ri(self.rng, 30, 700), "tool_use_result": tur})

    def glob(self) -> Call:
        pattern = pick(self.rng, ("**/*.py", "src/**/*.ts", "tests/**/test_*.py", "**/*.md", "**/*.toml"))
        files = [f"{self.root}/{p}" for p in self.rng.sample(REL_PATHS, ri(self.rng, 2, 60))]
        tur = {"filenames": files, "durationMs": ri(self.rng, 10, 300), "numFiles": len(files), "truncated": False}
        return Call(self.sim.tool("Glob", {"pattern": pattern}), "\n".join(files), {"duration_ms": tur["durationMs"], "tool_use_result": tur})

    def bash(self, command: str, stdout: str, *, fail: bool = False, duration_ms: int | None = None, description: str | None = None) -> Call:
        args: dict[str, Any] = {"command": command}
        if description:
            args["description"] = description
        if fail:
            text = f"Exit code 1\n{stdout}"
            opts: dict[str, Any] = {"is_error": True, "tool_use_result": _ui(f"Error: {text}")}
        else:
            text = stdout
            opts = {"tool_use_result": {"stdout": _ui(stdout), "stderr": "", "interrupted": False, "isImage": False}}
        opts["duration_ms"] = duration_ms if duration_ms is not None else ri(self.rng, 200, 4000)
        return Call(self.sim.tool("Bash", args), text, opts)

    def test_run(self, fail: bool | None = None) -> Call:
        fail = self.rng.random() < 0.45 if fail is None else fail
        out = _lines(cut(TEST_OUTPUT, self.rng, log_uniform(self.rng, 120, 3000)))
        passed = out.count("PASSED") + ri(self.rng, 0, 200)
        failed = ri(self.rng, 1, 6) if fail else 0
        summary = f"{'=' * 10} {failed} failed, {passed} passed in {self.rng.uniform(0.5, 60):.2f}s {'=' * 10}" if fail else \
            f"{'=' * 10} {passed} passed in {self.rng.uniform(0.5, 60):.2f}s {'=' * 10}"  # fmt: skip
        command = pick(self.rng, ("pytest -q", "python -m pytest -x -q", "uv run pytest tests/", "npm test --silent", "go test ./..."))
        return self.bash(command, out + summary, fail=fail, duration_ms=log_uniform(self.rng, 1500, 90_000), description="Run the test suite")

    def edit(self, path: str | None = None) -> Call:
        path = path or self.path()
        old = _lines(cut(CODE_RAW, self.rng, log_uniform(self.rng, 15, 400)))
        new = _lines(cut(CODE_RAW, self.rng, log_uniform(self.rng, 15, 600)))
        snippet = _lines(cut(CODE_NUMBERED, self.rng, ri(self.rng, 60, 300)))
        text = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{snippet}"
        tur = {"filePath": path, "oldString": _ui(old), "newString": _ui(new), "originalFile": None,
               "structuredPatch": [{"oldStart": 1, "oldLines": old.count("\n"), "newStart": 1, "newLines": new.count("\n"),
                                    "lines": ["-" + x for x in old.splitlines()[:3]] + ["+" + x for x in new.splitlines()[:3]]}],
               "userModified": False, "replaceAll": False}  # fmt: skip
        args = {"file_path": path, "old_string": old, "new_string": new}
        if self.rng.random() < 0.3:
            args["replace_all"] = False
        return Call(self.sim.tool("Edit", args), text, {"duration_ms": ri(self.rng, 8, 120), "tool_use_result": tur})

    def write(self, path: str | None = None, tokens: int | None = None) -> Call:
        path = path or self.path()
        content = _lines(cut(CODE_RAW, self.rng, tokens or log_uniform(self.rng, 200, 3000)))
        tur = {"type": "create", "filePath": path, "content": _ui(content), "structuredPatch": []}
        return Call(self.sim.tool("Write", {"file_path": path, "content": content}), f"File created successfully at: {path}",
                    {"duration_ms": ri(self.rng, 8, 200), "tool_use_result": tur})  # fmt: skip

    def todo(self) -> Call:
        todos = [{"content": sentence(self.rng, ri(self.rng, 6, 16)), "status": pick(self.rng, ("pending", "in_progress", "completed")),
                  "activeForm": sentence(self.rng, ri(self.rng, 5, 12))} for _ in range(ri(self.rng, 2, 7))]  # fmt: skip
        return Call(self.sim.tool("TodoWrite", {"todos": todos}), TODO_ACK,
                    {"duration_ms": ri(self.rng, 2, 20), "tool_use_result": {"oldTodos": [], "newTodos": todos}})

    def webfetch(self) -> Call:
        url = f"https://{pick(self.rng, ('docs.python.org', 'developer.mozilla.org', 'docs.rs', 'pkg.go.dev'))}/{pick(self.rng, REL_PATHS)}"
        text = sentence(self.rng, log_uniform(self.rng, 150, 1800))
        duration = ri(self.rng, 700, 7000)
        tur = {"bytes": len(text) * 3, "code": 200, "codeText": "OK", "result": _ui(text), "durationMs": duration, "url": url}
        return Call(self.sim.tool("WebFetch", {"url": url, "prompt": sentence(self.rng, 20)}), text, {"duration_ms": duration, "tool_use_result": tur})

    def mcp(self, server: str, tool: str, args: dict[str, Any], text: str, *, is_error: bool = False, duration_ms: int | None = None) -> Call:
        where = self.sim.spec.narration
        if where:
            note = {"explanation": sentence(self.sim.narration_rng, ri(self.sim.narration_rng, 8, 30))}
            args = {**note, **args} if where == "first" else {**args, **note}
        return Call(self.sim.tool(f"mcp__{server}__{tool}", args), text,
                    {"duration_ms": duration_ms if duration_ms is not None else log_uniform(self.rng, 120, 2500), "is_error": is_error})  # fmt: skip

    # --- moves ------------------------------------------------------------------------------------

    def run(self, calls: list[Call], pre: list[Block] | None = None, **kw: Any) -> Request:
        """One request asking for ``calls`` (after optional thinking/text blocks), then their results."""
        self.compact_if_needed()
        blocks = list(pre if pre is not None else self.think() + self.say(p=0.35))
        return self.sim.step(blocks + [c.block for c in calls], [(c.text, c.opts) for c in calls], **kw)

    def explore_call(self) -> Call:
        r = self.rng.random()
        if r < 0.45:
            return self.read()
        if r < 0.65:
            return self.grep()
        if r < 0.75:
            return self.glob()
        cmd = pick(self.rng, ("git status --short", "git log --oneline -15", "ls -la", "git diff --stat", "cat pyproject.toml"))
        return self.bash(cmd, _lines(cut(TEST_OUTPUT if "log" in cmd else CODE_RAW, self.rng, log_uniform(self.rng, 30, 600))),
                         duration_ms=ri(self.rng, 30, 900))  # fmt: skip

    def explore(self, n: int) -> None:
        """``n`` requests of looking around (reads, greps, globs, shell), sometimes several tools at once."""
        for _ in range(n):
            k = 1 if self.rng.random() < 0.7 else ri(self.rng, 2, 3)
            self.run([self.explore_call() for _ in range(k)])

    def answer(self, text: str | None = None, lo: int = 60, hi: int = 700) -> Request:
        self.compact_if_needed()
        body = text if text is not None else sentence(self.rng, log_uniform(self.rng, lo, hi))
        return self.sim.request(self.think(30, 400) + [self.sim.text(body)])

    def compact_if_needed(self) -> None:
        if self.sim.needs_compaction():
            self.sim.compact(COMPACT_PREFIX + cut(PROSE, self.rng, log_uniform(self.rng, 1500, 5000)))

    def task_result(self, child: Sim, prompt: str, report: str) -> tuple[str, dict[str, Any]]:
        """The Task/Agent tool result for a finished subagent: its report, and a toolUseResult with its usage."""
        usage = child.requests[-1].usage if child.requests else None
        agent = child.agent.agent_id if child.agent else ""
        tur = {"status": "completed", "prompt": prompt, "agentId": agent, "content": [{"type": "text", "text": report}],
               "totalDurationMs": child.now_ms - child.spec.start_ms, "totalTokens": child.totals().total_tokens,
               "totalToolUseCount": sum(len(r.tool_uses) for r in child.requests),
               "usage": {"input_tokens": usage.input_tokens, "cache_creation_input_tokens": usage.cache_write_5m_tokens + usage.cache_write_1h_tokens,
                         "cache_read_input_tokens": usage.cache_read_tokens, "output_tokens": usage.output_tokens} if usage else {}}  # fmt: skip
        return f"{report}\nagentId: {agent} (for resuming)", {"tool_use_result": tur, "as_blocks": True}
