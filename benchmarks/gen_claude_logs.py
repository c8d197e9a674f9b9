#!/usr/bin/env python3
"""Generate a deterministic synthetic corpus of Claude Code session logs.

Stdlib only. Example (1 GiB, 2,000 files, ~128 projects):

    python benchmarks/gen_claude_logs.py --out /work/scratch/bench-data/claude-1g \
        --total-mib 1024 --files 2000 --seed 1

Layout: OUT/projects/<encoded-cwd>/<sessionId>.jsonl, one compact JSON object per line
(json.dumps(..., separators=(",", ":")), as ccusage only parses lines containing the
exact bytes '"usage":{'). OUT/generator-stats.json records what was written, including
token totals per UTC day and model over unique requests, for cross-checking with
ccusage (benchmarks/verify_ccusage.py) and tokaudit.

Line shapes follow real Claude Code 2.1.x transcripts:
  * user prompt lines (string content, sometimes a list of text blocks, sometimes isMeta);
  * assistant lines: one line per content block (thinking / text / tool_use); all lines of
    one request share message.id, requestId and the same usage object. Ids are unique
    across the corpus (a counter is embedded in every id);
  * user lines with one tool_result each (+ toolUseResult), sizes long-tailed 100 B - 50 KB;
  * summary, file-history-snapshot and queue-operation lines.
  * Task tool results carry a toolUseResult.usage object (as real Claude Code does) on a
    *user* line; it is not a billed request of the parent session and must not be counted.

File sizes follow the quantiles of ccusage's own profile of a real directory
(p50 105 KB, p90 654 KB, p99 5.4 MB; the max is capped by --max-file-mib) and are then
scaled uniformly so that the total hits --total-mib.

Determinism: every file is generated from its own random.Random(seed, file index), so
the output is byte-identical for the same arguments regardless of --jobs.
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import json
import math
import os
import random
import sys
import time
from multiprocessing import Pool

# The simulator's lines of code (the same list, in the same order: a seed still gives the same corpus).
from tokaudit.simulate.text import CODE_TEMPLATES

VERSION = "2.1.14"
MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101")
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# (quantile, bytes) anchors of ccusage's profile (apps/ccusage/scripts/generate-large-fixture.nu)
SIZE_ANCHORS = [(0.0, 2_500), (0.5, 105_000), (0.9, 654_000), (0.99, 5_400_000)]

BUILTIN_TOOLS = [
    ("Read", 30),
    ("Bash", 24),
    ("Edit", 14),
    ("Grep", 8),
    ("Glob", 6),
    ("Write", 4),
    ("TodoWrite", 5),
    ("WebFetch", 1),
    ("WebSearch", 1),
    ("Task", 2),
]
MCP_TOOLS = [
    "mcp__github__create_pull_request",
    "mcp__github__get_issue",
    "mcp__github__list_commits",
    "mcp__playwright__browser_navigate",
    "mcp__playwright__browser_snapshot",
    "mcp__context7__get-library-docs",
    "mcp__context7__resolve-library-id",
    "mcp__plugin:serena:serena__find_symbol",
    "mcp__linear-server__list_issues",
    "mcp__sentry__search_issues",
]
MCP_WEIGHT = 5  # total weight of all MCP tools against the builtin weights above

WORDS = (
    "the a to of and in is that for it with as on this be we can function value file test "
    "error update return config module import class data result check list user request "
    "build run path line cache token session change fix add remove parse read write query "
    "table index column schema report usage model count total time start end state handle "
    "should would could will need make sure first then next also because when where which"
).split()


# --------------------------------------------------------------------------- pools
def _build_pools() -> tuple[str, str, str, list[str]]:
    r = random.Random(12345)
    prose_parts = []
    n = 0
    while n < 400_000:
        sent = " ".join(r.choice(WORDS) for _ in range(r.randint(6, 18)))
        s = sent[0].upper() + sent[1:] + r.choice([". ", ". ", "? ", ".\n\n", ": `x`. "])
        prose_parts.append(s)
        n += len(s)
    prose = "".join(prose_parts)
    code_parts, raw_parts = [], []
    n = 0
    ln = 1
    while n < 600_000:
        tpl = r.choice(CODE_TEMPLATES)
        w, v, a, b = (r.choice(WORDS) for _ in range(4))
        line = tpl.format(w=w, v=v, a=a, b=b, W=w.capitalize(), V=v.capitalize(), n=r.randint(0, 999))
        s = f"{ln:6d}\u2192{line}\n"
        code_parts.append(s)
        raw_parts.append(line + "\n")
        n += len(s)
        ln = ln + 1 if r.random() > 0.01 else 1
    code = "".join(code_parts)
    code_raw = "".join(raw_parts)
    paths = []
    for _ in range(4000):
        depth = r.randint(1, 4)
        paths.append(
            "/".join(r.choice(WORDS) for _ in range(depth)) + r.choice([".py", ".ts", ".rs", ".md", ".json", ".toml", ".go", "_test.py"])
        )
    return prose, code, code_raw, paths


# PROSE: English-like text; CODE: source lines numbered like Read output ("     1\u2192...");
# CODE_RAW: the same source without numbers (Edit/Write inputs, file contents)
PROSE, CODE, CODE_RAW, PATHS = _build_pools()


def _slice(pool: str, rng: random.Random, n: int) -> str:
    n = max(0, int(n))
    L = len(pool)
    if n >= L:
        return (pool * (n // L + 1))[:n]
    s = rng.randrange(L - n)
    return pool[s : s + n]


def _b62(x: int, width: int) -> str:
    out = []
    for _ in range(width):
        x, d = divmod(x, 62)
        out.append(B62[d])
    return "".join(reversed(out))


def _rand62(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(B62, k=n))


def _uuid(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _ts(t: float) -> str:
    sec = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%03dZ" % int((t - sec) * 1000)


def _lognorm(rng: random.Random, median: float, sigma: float, lo: float, hi: float) -> int:
    v = median * math.exp(rng.gauss(0.0, sigma))
    return int(min(hi, max(lo, v)))


# --------------------------------------------------------------------------- sizes / layout
def file_sizes(n_files: int, total_bytes: int, max_bytes: int, rng: random.Random) -> list[int]:
    anchors = SIZE_ANCHORS + [(1.0, max(max_bytes, SIZE_ANCHORS[-1][1] + 1))]
    qs = [a[0] for a in anchors]
    logs = [math.log(a[1]) for a in anchors]

    def q2size(q: float) -> float:
        i = min(len(qs) - 2, max(0, bisect.bisect_right(qs, q) - 1))
        f = (q - qs[i]) / (qs[i + 1] - qs[i])
        return math.exp(logs[i] + f * (logs[i + 1] - logs[i]))

    raw = [q2size((i + rng.random()) / n_files) for i in range(n_files)]
    rng.shuffle(raw)
    k = total_bytes / sum(raw)
    return [max(1, int(s * k)) for s in raw]


def project_names(n: int, rng: random.Random) -> list[str]:
    names, seen = [], set()
    while len(names) < n:
        base = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        if rng.random() < 0.3:
            base += f"-{rng.randint(2, 99)}"
        if base in seen:
            continue
        seen.add(base)
        names.append(base)
    return names


# --------------------------------------------------------------------------- per-file generator
class SessionWriter:
    def __init__(self, task: dict):
        self.t = task
        self.rng = random.Random(task["seed"] * 1_000_003 + task["index"])
        self.fidx = _b62(task["index"], 3)
        self.req_n = 0
        self.tool_n = 0
        r = self.rng
        self.session_id = task["session_id"]
        self.cwd = task["cwd"]
        self.branch = r.choice(["main", "main", "master", "dev", f"feature/{r.choice(WORDS)}-{r.choice(WORDS)}"])
        self.slug = f"{r.choice(WORDS)}-{r.choice(WORDS)}-{r.choice(WORDS)}"
        self.model = MODELS[1] if r.random() < task["opus_share"] else MODELS[0]
        self.ttl_1h = r.random() < 0.3
        self.fast_frac = task["fast_frac"]
        self.vary_frac = task["varying_usage_frac"]
        self.ctx = 0
        self.parent = None
        # stats
        self.lines = 0
        self.bytes = 0
        self.assistant_lines = 0
        self.tool_uses = 0
        self.tool_results = 0
        self.by_type: dict[str, int] = {}
        self.line_sizes: list[int] = []
        self.day_model: dict[tuple[str, str], list[int]] = {}
        self.requests = 0
        self.fast_requests = 0
        self.buf: list[bytes] = []

    # ---- helpers
    def _emit(self, obj: dict, kind: str) -> None:
        b = (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        self.buf.append(b)
        self.by_type[kind] = self.by_type.get(kind, 0) + 1

    def _env(self, slug: bool = True) -> dict:
        d = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": VERSION,
            "gitBranch": self.branch,
        }
        if slug:
            d["slug"] = self.slug
        return d

    def _tool_id(self) -> str:
        self.tool_n += 1
        return "toolu_01" + _rand62(self.rng, 11) + self.fidx + _b62(self.tool_n, 8)

    # ---- line builders
    def user_prompt(self, t: float) -> None:
        r = self.rng
        if r.random() < 0.9:
            mid = _uuid(r)
            backups = {}
            for _ in range(r.randint(0, 4)):
                backups[f"{self.cwd}/{r.choice(PATHS)}"] = {
                    "backupFileName": f"{r.getrandbits(64):016x}@v{r.randint(1, 9)}",
                    "version": r.randint(1, 9),
                    "backupTime": _ts(t - r.uniform(1, 3600)),
                }
            self._emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": mid,
                    "snapshot": {"messageId": mid, "trackedFileBackups": backups, "timestamp": _ts(t)},
                    "isSnapshotUpdate": False,
                },
                "file-history-snapshot",
            )
        u = _uuid(r)
        d = self._env(slug=self.parent is not None)
        d["type"] = "user"
        text = _slice(PROSE, r, _lognorm(r, 180, 1.0, 5, 12_000))
        if r.random() < 0.15:
            d["message"] = {"role": "user", "content": [{"type": "text", "text": text}]}
        else:
            d["message"] = {"role": "user", "content": text}
        if r.random() < 0.05:
            d["isMeta"] = True
        d["uuid"] = u
        d["timestamp"] = _ts(t)
        if r.random() < 0.3:
            d["thinkingMetadata"] = {"level": "high", "disabled": False, "triggers": []}
            d["todos"] = []
        self._emit(d, "user-prompt")
        self.parent = u

    def _usage(self, n_tools: int) -> dict:
        r = self.rng
        if self.ctx == 0:
            cache_read = r.choice([0, r.randint(12_000, 22_000)])
            cc = r.randint(2_000, 25_000)
        else:
            cache_read = self.ctx
            cc = _lognorm(r, 450, 1.2, 0, 60_000)
        self.ctx = cache_read + cc
        if self.ctx > 170_000:  # auto-compact
            self.ctx = r.randint(15_000, 30_000)
        inp = r.randint(0, 12) if r.random() > 0.05 else _lognorm(r, 800, 1.3, 20, 30_000)
        out = _lognorm(r, 180 if n_tools else 350, 1.1, 1 if not n_tools else 20, 16_000)
        cc1h = cc if self.ttl_1h else 0
        if not self.ttl_1h and cc and r.random() < 0.05:
            cc1h = r.randint(0, cc)
        u = {
            "input_tokens": inp,
            "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": cache_read,
            "cache_creation": {"ephemeral_5m_input_tokens": cc - cc1h, "ephemeral_1h_input_tokens": cc1h},
            "output_tokens": out,
            "service_tier": "standard",
        }
        if r.random() < self.fast_frac:
            u["speed"] = "fast"
        return u

    def _tool_input(self, name: str) -> dict:
        r = self.rng
        p = f"{self.cwd}/{r.choice(PATHS)}"
        if name == "Read":
            return {"file_path": p}
        if name == "Bash":
            return {
                "command": _slice(PROSE, r, _lognorm(r, 40, 0.8, 5, 2000)).replace("\n", " "),
                "description": _slice(PROSE, r, r.randint(10, 60)),
            }
        if name == "Edit":
            return {
                "replace_all": False,
                "file_path": p,
                "old_string": _slice(CODE_RAW, r, _lognorm(r, 250, 1.0, 10, 20_000)),
                "new_string": _slice(CODE_RAW, r, _lognorm(r, 320, 1.0, 10, 20_000)),
            }
        if name == "Write":
            return {"file_path": p, "content": _slice(CODE_RAW, r, _lognorm(r, 1500, 1.0, 50, 40_000))}
        if name == "Grep":
            return {"pattern": r.choice(WORDS), "path": self.cwd, "output_mode": r.choice(["content", "files_with_matches"])}
        if name == "Glob":
            return {"pattern": f"**/*{r.choice(['.py', '.ts', '.md', '.rs'])}"}
        if name == "TodoWrite":
            return {
                "todos": [
                    {
                        "content": _slice(PROSE, r, r.randint(20, 80)),
                        "status": r.choice(["pending", "in_progress", "completed"]),
                        "activeForm": _slice(PROSE, r, r.randint(20, 80)),
                    }
                    for _ in range(r.randint(1, 6))
                ]
            }
        if name == "WebFetch":
            return {"url": f"https://docs.example.com/{r.choice(WORDS)}/{r.choice(WORDS)}", "prompt": _slice(PROSE, r, 80)}
        if name == "WebSearch":
            return {"query": _slice(PROSE, r, r.randint(15, 60))}
        if name == "Task":
            return {
                "description": _slice(PROSE, r, 30),
                "prompt": _slice(PROSE, r, _lognorm(r, 600, 0.8, 50, 8000)),
                "subagent_type": r.choice(["general-purpose", "Explore", "code-reviewer"]),
            }
        return {"query": _slice(PROSE, r, r.randint(10, 80)), "limit": r.randint(1, 50)}  # mcp

    def _pick_tool(self) -> str:
        r = self.rng
        x = r.uniform(0, self.tool_wsum)
        if x >= self.builtin_wsum:
            return r.choice(MCP_TOOLS)
        return BUILTIN_TOOLS[bisect.bisect_right(self.cum_w, x)][0]

    cum_w: list[float] = []
    builtin_wsum = 0.0
    tool_wsum = 0.0

    def request(self, t: float, force_end: bool = False) -> tuple[float, list[tuple[str, str, dict]]]:
        """Write one model request (one line per content block); return (t, tool_uses)."""
        r = self.rng
        self.req_n += 1
        self.requests += 1
        model = self.model if r.random() > 0.08 else MODELS[0] if self.model == MODELS[1] else MODELS[1]
        msg_id = "msg_01" + _rand62(r, 14) + self.fidx + _b62(self.req_n, 5)
        req_id = "req_011C" + _rand62(r, 8) + self.fidx + _b62(self.req_n, 5)
        x = r.random()
        n_tools = 0 if force_end else (0 if x < 0.22 else 1 if x < 0.78 else 2 if x < 0.92 else r.randint(3, 5))
        blocks: list[dict] = []
        if r.random() < (0.4 if model == MODELS[1] else 0.15):
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": _slice(PROSE, r, _lognorm(r, 400, 1.0, 20, 20_000)),
                    "signature": _rand62(r, r.randint(200, 600)),
                }
            )
        if n_tools == 0 or r.random() < 0.65:
            blocks.append({"type": "text", "text": _slice(PROSE, r, _lognorm(r, 160 if n_tools else 500, 1.0, 3, 20_000))})
        tool_uses = []
        for _ in range(n_tools):
            name = self._pick_tool()
            tid = self._tool_id()
            inp = self._tool_input(name)
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
            tool_uses.append((tid, name, inp))
        usage = self._usage(n_tools)
        # keep every line of the request on the same UTC day (unambiguous per-day totals)
        span = 0.9 * len(blocks) + 0.1
        if int(t // 86400) != int((t + span) // 86400):
            t = (int(t // 86400) + 1) * 86400 + 0.25
        day = time.strftime("%Y-%m-%d", time.gmtime(t))
        placeholder = len(blocks) > 1 and r.random() < self.vary_frac
        for i, blk in enumerate(blocks):
            u = _uuid(r)
            d = self._env()
            last = i == len(blocks) - 1
            line_usage = usage
            if placeholder and not last:
                line_usage = dict(usage)
                line_usage["output_tokens"] = min(usage["output_tokens"], r.randint(1, 25))
            d["message"] = {
                "model": model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [blk],
                "stop_reason": ("tool_use" if n_tools else "end_turn") if last else None,
                "stop_sequence": None,
                "usage": line_usage,
            }
            d["requestId"] = req_id
            d["type"] = "assistant"
            d["uuid"] = u
            d["timestamp"] = _ts(t)
            self._emit(d, "assistant")
            self.assistant_lines += 1
            self.parent = u
            t += r.uniform(0.05, 0.9)
        if "speed" in usage:
            self.fast_requests += 1
        acc = self.day_model.setdefault((day, model), [0, 0, 0, 0, 0, 0, 0])
        acc[0] += usage["input_tokens"]
        acc[1] += usage["output_tokens"]
        acc[2] += usage["cache_creation_input_tokens"]
        acc[3] += usage["cache_read_input_tokens"]
        acc[4] += 1
        acc[5] += usage["cache_creation"]["ephemeral_5m_input_tokens"]
        acc[6] += usage["cache_creation"]["ephemeral_1h_input_tokens"]
        self.tool_uses += n_tools
        return t, tool_uses

    def tool_result(self, t: float, tid: str, name: str, inp: dict, asst_uuid: str) -> None:
        r = self.rng
        n = _lognorm(r, 800, 1.35, 100, 50_000)
        is_err = r.random() < 0.04
        path = inp.get("file_path", f"{self.cwd}/{r.choice(PATHS)}")
        res: object
        if is_err:
            content = "<tool_use_error>" + _slice(PROSE, r, min(n, 600)) + "</tool_use_error>"
            tur: object = "Error: " + content
            res = content
        elif name == "Read":
            content = _slice(CODE, r, n)
            nl = content.count("\n") + 1
            res = content
            raw = _slice(CODE_RAW, r, int(n * 0.85))  # the file text without the line-number gutter
            tur = {"type": "text", "file": {"filePath": path, "content": raw, "numLines": nl, "startLine": 1, "totalLines": nl}}
        elif name == "Bash":
            content = _slice(PROSE if r.random() < 0.5 else CODE_RAW, r, n)
            res = content
            tur = {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
        elif name == "Edit":
            snippet = _slice(CODE, r, min(n, 2000))
            res = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{snippet}"
            tur = {
                "filePath": path,
                "oldString": inp["old_string"],
                "newString": inp["new_string"],
                "originalFile": _slice(CODE_RAW, r, n),
                "structuredPatch": [
                    {
                        "oldStart": 3,
                        "oldLines": 3,
                        "newStart": 3,
                        "newLines": 5,
                        "lines": [" " + x for x in inp["old_string"].split("\n")[:8]],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
        elif name == "Write":
            res = f"File created successfully at: {path}"
            tur = {"type": "create", "filePath": path, "content": inp["content"], "structuredPatch": [], "originalFile": None}
        elif name in ("Glob", "Grep"):
            files = [f"{self.cwd}/{r.choice(PATHS)}" for _ in range(max(1, n // 60))]
            res = "\n".join(files)
            if name == "Glob":
                tur = {"filenames": files, "durationMs": r.randint(5, 900), "numFiles": len(files), "truncated": False}
            else:
                tur = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        elif name == "TodoWrite":
            res = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"
            tur = {"oldTodos": [], "newTodos": inp["todos"]}
        elif name == "Task":
            text = _slice(PROSE, r, n)
            res = [{"type": "text", "text": text}]
            sub = {
                "input_tokens": r.randint(1, 40),
                "cache_creation_input_tokens": r.randint(1000, 30_000),
                "cache_read_input_tokens": r.randint(10_000, 400_000),
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "output_tokens": r.randint(100, 5000),
                "service_tier": "standard",
            }
            sub["cache_creation"]["ephemeral_5m_input_tokens"] = sub["cache_creation_input_tokens"]
            tur = {
                "status": "completed",
                "prompt": inp["prompt"],
                "agentId": "%08x" % r.getrandbits(32),
                "content": res,
                "totalDurationMs": r.randint(5000, 600_000),
                "totalTokens": r.randint(10_000, 500_000),
                "totalToolUseCount": r.randint(1, 60),
                "usage": sub,
            }
        else:  # WebFetch, WebSearch, MCP
            text = _slice(PROSE, r, n)
            res = [{"type": "text", "text": text}] if name.startswith("mcp__") else text
            tur = (
                [{"type": "text", "text": text}]
                if name.startswith("mcp__")
                else {"bytes": n, "code": 200, "codeText": "OK", "result": text, "durationMs": r.randint(100, 9000)}
            )
        u = _uuid(r)
        d = self._env()
        d["type"] = "user"
        block = {"tool_use_id": tid, "type": "tool_result", "content": res}
        if is_err or name == "Bash":
            block["is_error"] = is_err
        d["message"] = {"role": "user", "content": [block]}
        d["uuid"] = u
        d["timestamp"] = _ts(t)
        d["toolUseResult"] = tur
        d["sourceToolAssistantUUID"] = asst_uuid
        self._emit(d, "tool-result")
        self.tool_results += 1
        self.parent = u

    # ---- session
    def run(self) -> dict:
        r = self.rng
        target = self.t["target_bytes"]
        t = self.t["start_time"]
        w = 0.0
        cum = []
        for _, wt in BUILTIN_TOOLS:
            w += wt
            cum.append(w)
        self.cum_w, self.builtin_wsum, self.tool_wsum = cum, w, w + MCP_WEIGHT
        out_path = self.t["path"]
        written = 0
        line_sizes = self.line_sizes
        with open(out_path, "wb", buffering=1 << 20) as fh:
            if r.random() < 0.5:
                self._emit(
                    {"type": "queue-operation", "operation": "dequeue", "timestamp": _ts(t), "sessionId": self.session_id},
                    "queue-operation",
                )
            if r.random() < 0.25:
                for _ in range(r.randint(1, 3)):
                    self._emit({"type": "summary", "summary": _slice(PROSE, r, r.randint(20, 90)).strip(), "leafUuid": _uuid(r)}, "summary")
            head, self.buf = self.buf, []
            for b in head:
                fh.write(b)
                written += len(b)
                line_sizes.append(len(b))
            # one "turn" = user prompt, then requests until one ends without tool calls.
            # Lines are committed per step (a request plus its tool results); the session
            # ends at the step boundary that brings the file closest to its target size.
            first = True
            done = False
            while not done:
                snapshot = self.lines_snapshot()
                self.user_prompt(t)
                t += r.uniform(1.0, 6.0)
                n_req = 0
                while True:
                    t, tools = self.request(t, force_end=n_req >= 60)
                    n_req += 1
                    asst_uuid = self.parent
                    for tid, name, inp in tools:
                        t += _lognorm(r, 1500, 1.2, 30, 120_000) / 1000.0
                        self.tool_result(t, tid, name, inp, asst_uuid)
                    t += r.uniform(0.5, 3.0) + _lognorm(r, 4, 0.8, 1, 60)
                    chunk_bytes = sum(len(b) for b in self.buf)
                    if first or written + chunk_bytes - target <= target - written:
                        for b in self.buf:
                            fh.write(b)
                            line_sizes.append(len(b))
                        written += chunk_bytes
                        self.buf = []
                        first = False
                    else:
                        self.rollback(snapshot)
                        done = True
                        break
                    if written >= target:
                        done = True
                        break
                    snapshot = self.lines_snapshot()
                    if not tools:
                        break
                t += _lognorm(r, 90, 1.5, 5, 3 * 3600)  # user think time between turns
        self.bytes = written
        self.lines = len(line_sizes)
        self.by_type["user"] = self.by_type.get("user-prompt", 0) + self.by_type.get("tool-result", 0)
        return {
            "index": self.t["index"],
            "path": out_path,
            "bytes": written,
            "lines": self.lines,
            "assistant_lines": self.assistant_lines,
            "requests": self.requests,
            "fast_requests": self.fast_requests,
            "tool_uses": self.tool_uses,
            "tool_results": self.tool_results,
            "by_type": self.by_type,
            "day_model": {f"{d}|{m}": v for (d, m), v in self.day_model.items()},
            "line_sizes": line_sizes,
        }

    # rollback support: a discarded (last) turn must not count in the stats
    def lines_snapshot(self):
        return (
            self.assistant_lines,
            self.requests,
            self.fast_requests,
            self.tool_uses,
            self.tool_results,
            dict(self.by_type),
            {k: list(v) for k, v in self.day_model.items()},
        )

    def rollback(self, s) -> None:
        (self.assistant_lines, self.requests, self.fast_requests, self.tool_uses, self.tool_results, self.by_type, self.day_model) = s
        self.buf = []


def _gen_one(task: dict) -> dict:
    return SessionWriter(task).run()


# --------------------------------------------------------------------------- main
def pct(sorted_vals: list[int], p: float) -> int:
    if not sorted_vals:
        return 0
    return sorted_vals[min(len(sorted_vals) - 1, int(p / 100.0 * len(sorted_vals)))]


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output dir; files go to OUT/projects/<project>/<session>.jsonl")
    ap.add_argument("--total-mib", type=float, default=1024.0, help="total size to write (MiB)")
    ap.add_argument("--files", type=int, default=2000, help="number of session files")
    ap.add_argument("--projects", type=int, default=128, help="number of project directories")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--days", type=int, default=30, help="sessions start within this many days")
    ap.add_argument("--start-date", default="2026-01-05", help="first day (UTC) of the time window")
    ap.add_argument("--max-file-mib", type=float, default=64.0, help="size of the largest file before scaling to --total-mib (profile max)")
    ap.add_argument("--opus-share", type=float, default=0.35, help="share of sessions whose main model is opus")
    ap.add_argument("--fast-frac", type=float, default=1 / 7, help="share of requests with usage.speed='fast'")
    ap.add_argument(
        "--varying-usage-frac",
        type=float,
        default=0.0,
        help="share of multi-block requests whose earlier lines carry a placeholder output_tokens "
        "(exercises keep-max dedupe; default 0 = all lines of a request share one usage)",
    )
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--force", action="store_true", help="write even if OUT/projects already has files")
    a = ap.parse_args(argv)

    t0 = time.time()
    proj_root = os.path.join(a.out, "projects")
    if os.path.isdir(proj_root) and any(os.scandir(proj_root)) and not a.force:
        print(f"error: {proj_root} is not empty (use --force to overwrite same-named files; delete it for a clean corpus)", file=sys.stderr)
        return 2
    g = random.Random(a.seed)
    total_bytes = int(a.total_mib * 1024 * 1024)
    sizes = file_sizes(a.files, total_bytes, int(a.max_file_mib * 1024 * 1024), g)
    projects = project_names(a.projects, g)
    pweights = [1.0 / (i + 1) ** 0.8 for i in range(a.projects)]
    start = calendar.timegm(time.strptime(a.start_date, "%Y-%m-%d"))  # UTC midnight
    window = a.days * 86400.0
    tasks = []
    seen_sessions = set()
    for i in range(a.files):
        # every project gets at least one file, the rest follow a Zipf-like skew
        p = i if i < a.projects else g.choices(range(a.projects), weights=pweights)[0]
        name = projects[p]
        sid = _uuid(g)
        while sid in seen_sessions:
            sid = _uuid(g)
        seen_sessions.add(sid)
        # long sessions run for days: start them early enough to (mostly) stay in the window
        est_duration = sizes[i] / 4500.0 * 25.0
        st = start + g.uniform(0, max(3600.0, window - est_duration))
        d = os.path.join(proj_root, "-home-dev-src-" + name)
        tasks.append(
            {
                "index": i,
                "seed": a.seed,
                "target_bytes": sizes[i],
                "start_time": st,
                "session_id": sid,
                "cwd": "/home/dev/src/" + name,
                "path": os.path.join(d, sid + ".jsonl"),
                "opus_share": a.opus_share,
                "fast_frac": a.fast_frac,
                "varying_usage_frac": a.varying_usage_frac,
            }
        )
    for d in {os.path.dirname(tk["path"]) for tk in tasks}:
        os.makedirs(d, exist_ok=True)

    # biggest files first for better load balance; results are re-sorted by index
    order = sorted(tasks, key=lambda tk: -tk["target_bytes"])
    if a.jobs > 1:
        with Pool(a.jobs) as pool:
            results = list(pool.imap_unordered(_gen_one, order, chunksize=1))
    else:
        results = [_gen_one(tk) for tk in order]
    results.sort(key=lambda x: x["index"])

    # ---- aggregate
    tot = {
        "files": len(results),
        "projects": len({os.path.dirname(x["path"]) for x in results}),
        "bytes": 0,
        "lines": 0,
        "assistant_lines": 0,
        "unique_requests": 0,
        "fast_requests": 0,
        "tool_uses": 0,
        "tool_results": 0,
    }
    by_type: dict[str, int] = {}
    day_model: dict[str, list[int]] = {}
    all_lines: list[int] = []
    fsizes = []
    for x in results:
        tot["bytes"] += x["bytes"]
        tot["lines"] += x["lines"]
        tot["assistant_lines"] += x["assistant_lines"]
        tot["unique_requests"] += x["requests"]
        tot["fast_requests"] += x["fast_requests"]
        tot["tool_uses"] += x["tool_uses"]
        tot["tool_results"] += x["tool_results"]
        fsizes.append(x["bytes"])
        all_lines.extend(x["line_sizes"])
        for k, v in x["by_type"].items():
            by_type[k] = by_type.get(k, 0) + v
        for k, v in x["day_model"].items():
            acc = day_model.setdefault(k, [0] * 7)
            for j in range(7):
                acc[j] += v[j]
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "requests",
        "cache_write_5m_tokens",
        "cache_write_1h_tokens",
    )
    days: dict[str, dict] = {}
    models: dict[str, dict] = {}
    totals = dict.fromkeys(keys, 0)
    for k in sorted(day_model):
        day, model = k.split("|")
        v = day_model[k]
        dd = days.setdefault(day, {**dict.fromkeys(keys, 0), "models": {}})
        dd["models"][model] = dict(zip(keys, v))
        mm = models.setdefault(model, dict.fromkeys(keys, 0))
        for j, key in enumerate(keys):
            dd[key] += v[j]
            mm[key] += v[j]
            totals[key] += v[j]
    all_lines.sort()
    fsizes.sort()
    stats = {
        "generator": "benchmarks/gen_claude_logs.py",
        "args": vars(a),
        "totals_written": tot,
        "line_types": dict(sorted(by_type.items())),
        "line_bytes": {
            "median": pct(all_lines, 50),
            "p90": pct(all_lines, 90),
            "p99": pct(all_lines, 99),
            "max": all_lines[-1] if all_lines else 0,
        },
        "file_bytes": {"min": fsizes[0], "median": pct(fsizes, 50), "p90": pct(fsizes, 90), "p99": pct(fsizes, 99), "max": fsizes[-1]},
        "tokens_unique_requests": totals,
        "tokens_by_model": models,
        "tokens_by_day_utc": days,
        "seconds": round(time.time() - t0, 2),
    }
    with open(os.path.join(a.out, "generator-stats.json"), "w") as fh:
        json.dump(stats, fh, indent=1)

    print(f"wrote {tot['files']} files in {tot['projects']} projects under {proj_root}")
    print(f"  bytes            {tot['bytes']:,} ({tot['bytes'] / 2**20:.1f} MiB, target {a.total_mib:g} MiB)")
    print(f"  lines            {tot['lines']:,}  ({', '.join(f'{k} {v:,}' for k, v in sorted(by_type.items()) if k != 'user')})")
    print(f"  assistant lines  {tot['assistant_lines']:,}")
    print(f"  unique requests  {tot['unique_requests']:,} (message.id+requestId; {tot['fast_requests']:,} with speed=fast)")
    print(f"  tool_use blocks  {tot['tool_uses']:,}; tool_result lines {tot['tool_results']:,}")
    lb, fb = stats["line_bytes"], stats["file_bytes"]
    print(f"  line bytes       median {lb['median']:,}  p90 {lb['p90']:,}  p99 {lb['p99']:,}  max {lb['max']:,}")
    print(f"  file bytes       median {human(fb['median'])}  p90 {human(fb['p90'])}  p99 {human(fb['p99'])}  max {human(fb['max'])}")
    print(f"  days (UTC)       {min(days)} .. {max(days)} ({len(days)} days)")
    print("  tokens (unique requests): " + ", ".join(f"{k} {totals[k]:,}" for k in keys[:4]))
    print(f"  total tokens     {sum(totals[k] for k in keys[:4]):,}")
    print(f"  stats            {os.path.join(a.out, 'generator-stats.json')}  ({stats['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
