#!/usr/bin/env python3
"""Deterministic generator of valid Claude Code / Codex CLI log variants.

usage: gen.py SEED OUT

Writes
  OUT/claude/projects/<proj>/...jsonl      (CLAUDE_CONFIG_DIR=OUT/claude)
  OUT/codex/sessions/YYYY/MM/DD/rollout-*.jsonl, OUT/codex/archived_sessions/...  (CODEX_HOME=OUT/codex)
  OUT/labels.json   truth per source/day/model/kind, scenario per day, expected problem lines

Each scenario gets its own UTC day (plus the following day for midnight spill-over), so a
per-day mismatch points at one scenario. Truth follows the shared reference's formats.md (sections cited
below); where it is silent, the scenario is marked ambiguous and its truth says what it assumes.
stdlib only.
"""
import json
import os
import random
import string
import sys
from datetime import datetime, timedelta, timezone

SEED = int(sys.argv[1])
OUT = sys.argv[2]
rng = random.Random(SEED)

BASE = datetime(2026, 3, 2, tzinfo=timezone.utc) + timedelta(days=(SEED % 5) * 40)


def dumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def ts(dt):
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def rid(prefix, n=24):
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def uuid():
    h = "%032x" % rng.getrandbits(128)
    return "%s-%s-4%s-a%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], h[20:32])


FILES = {}          # relpath -> list of (line_text) ; final newline handling in META
NO_FINAL_NL = set()
TRUTH = {"claude": {}, "codex": {}}      # src -> day -> model -> kinds
SCEN_DAYS = {}      # day -> list of scenario names
AMBIG = {}          # scenario -> note
PROBLEMS = []       # (relpath, line_no 1-based, why)
EXPECT_IGNORED = {}  # scenario -> note on documented differences


def add_line(path, text):
    FILES.setdefault(path, []).append(text)
    return len(FILES[path])


KINDS = ("input", "cache_write", "cache_write_5m", "cache_write_1h", "cache_read", "output", "reasoning", "web_search")


def book(src, when, model, **k):
    day = when.astimezone(timezone.utc).strftime("%Y-%m-%d")
    m = TRUTH[src].setdefault(day, {}).setdefault(model, {x: 0 for x in KINDS} | {"requests": 0})
    for x, v in k.items():
        m[x] += v
    m["requests"] += 1


def scen_day(i):
    return BASE + timedelta(days=2 * i)


# ----------------------------------------------------------------------------------------------
# Claude Code
# ----------------------------------------------------------------------------------------------
CLAUDE_REQ = {}   # (msg_id, req_id) -> (total, when, model, kinds)  for global keep-max dedup
CLAUDE_NOKEY = []  # (when, model, kinds)  lines that cannot be deduped
TEXTS = ["Let me look at the file.", "Je vais vérifier ça — d'accord.", "ファイルを確認します。",
         "Готово. Всё работает ✅", "Running the tests now 🚀", "Here is the fix:\n```py\nprint('hi')\n```"]


class CSession:
    def __init__(self, proj, session_id=None, version="2.1.14", cwd=None, relpath=None, sidechain=False, agent_id=None):
        self.proj = proj
        self.sid = session_id or uuid()
        self.version = version
        self.cwd = cwd or "/home/dev/" + proj.strip("-").split("-")[-1]
        self.path = relpath or "claude/projects/%s/%s.jsonl" % (proj, self.sid)
        self.parent = None
        self.sidechain = sidechain
        self.agent_id = agent_id

    def base(self, typ, when):
        u = uuid()
        d = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
             "sessionId": self.sid, "version": self.version, "gitBranch": "main"}
        if self.agent_id:
            d["agentId"] = self.agent_id
        d.update({"type": typ, "uuid": u, "timestamp": ts(when)})
        self.parent = u
        return d

    def user(self, when, text="please continue"):
        d = self.base("user", when)
        d["message"] = {"role": "user", "content": text}
        return add_line(self.path, dumps(d))

    def raw(self, obj):
        return add_line(self.path, dumps(obj))

    def assistant(self, when, model, msg_id, req_id, usage, block=None, stop_reason=None, extra=None,
                  top_extra=None, compact=True):
        d = self.base("assistant", when)
        block = block or {"type": "text", "text": rng.choice(TEXTS)}
        msg = {"model": model, "type": "message", "role": "assistant", "content": [block],
               "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}
        if msg_id is not None:
            msg = {"model": model, "id": msg_id} | msg
        if extra:
            msg.update(extra)
        d["message"] = msg
        if req_id is not None:
            d["requestId"] = req_id
        # keep Claude Code's key order: message before requestId/type/uuid/timestamp
        order = ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId",
                 "message", "requestId", "type", "uuid", "timestamp"]
        d = {k: d[k] for k in order if k in d}
        if top_extra:
            d.update(top_extra)
        text = dumps(d) if compact else json.dumps(d, ensure_ascii=False)
        return add_line(self.path, text)


def cusage(inp, cw5=0, cw1=0, cr=0, out=0, split=True, web=None, speed=None, cw_total=None):
    u = {"input_tokens": inp, "cache_creation_input_tokens": cw_total if cw_total is not None else cw5 + cw1,
         "cache_read_input_tokens": cr}
    if split:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": cw5, "ephemeral_1h_input_tokens": cw1}
    u["output_tokens"] = out
    u["service_tier"] = "standard"
    if web is not None:
        u["server_tool_use"] = {"web_search_requests": web, "web_fetch_requests": 0}
    if speed is not None:
        u["speed"] = speed
    return u


def ckinds(u):
    u = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0} | u
    cc = u.get("cache_creation")
    if cc:
        cw5, cw1 = cc.get("ephemeral_5m_input_tokens", 0), cc.get("ephemeral_1h_input_tokens", 0)
    else:
        cw5, cw1 = u.get("cache_creation_input_tokens", 0), 0
    return {"input": u["input_tokens"], "cache_write": cw5 + cw1, "cache_write_5m": cw5, "cache_write_1h": cw1,
            "cache_read": u.get("cache_read_input_tokens", 0), "output": u["output_tokens"],
            "web_search": (u.get("server_tool_use") or {}).get("web_search_requests", 0)}


def ctotal(k):
    return k["input"] + k["cache_write"] + k["cache_read"] + k["output"]


def claude_req(sess, when, model, usage, n_blocks=1, msg_id=None, req_id=None, dedup=True, count=True, **kw):
    """Write one API request (n_blocks lines, same ids + usage) and record truth."""
    msg_id = msg_id if msg_id is not None else rid("msg_01")
    req_id = req_id if req_id is not None else rid("req_011C", 20)
    blocks = [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
              {"type": "text", "text": rng.choice(TEXTS)},
              {"type": "tool_use", "id": rid("toolu_01"), "name": "Bash", "input": {"command": "ls -la"}},
              {"type": "tool_use", "id": rid("toolu_01"), "name": "mcp__github__get_issue", "input": {"n": 3}}]
    fixed = kw.pop("block", None)
    for b in range(n_blocks):
        sess.assistant(when + timedelta(milliseconds=37 * b), model, msg_id, req_id, usage,
                       block=fixed or blocks[b % len(blocks)], **kw)
    if count:
        claude_record(when, model, msg_id, req_id, usage)
    return msg_id, req_id


def claude_record(when, model, msg_id, req_id, usage):
    k = ckinds(usage)
    if msg_id is None or req_id is None:
        CLAUDE_NOKEY.append((when, model, k))
        return
    key = (msg_id, req_id)
    cur = CLAUDE_REQ.get(key)
    if cur is None or ctotal(k) > cur[0]:
        CLAUDE_REQ[key] = (ctotal(k), when, model, k)


def rnd_usage(big=False, split=True, one_h=False):
    inp = rng.choice([1, 2, 3, 5, 8, 12, 40, 310])
    cw = rng.randint(0, 9000) if rng.random() < 0.7 else 0
    cw1 = cw if one_h else (rng.randint(0, cw) if rng.random() < 0.3 and split else 0)
    cr = rng.randint(1000, 90000 if not big else 190000)
    out = rng.randint(20, 4000)
    return cusage(inp, cw - cw1, cw1, cr, out, split=split)


MODELS_C = ["claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001",
            "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-opus-4-20250514",
            "claude-3-7-sonnet-20250219", "claude-3-5-haiku-20241022", "claude-sonnet-4-5", "claude-opus-4-5",
            "claude-haiku-4-5", "claude-opus-4-1"]

def scenarios_into(registry):
    """A decorator factory registering a scenario (name, writer, notes) into ``registry``."""
    def scenario(name, ambiguous=None, documented=None):
        def deco(f):
            registry.append((name, f, ambiguous, documented))
            return f
        return deco
    return scenario


CSCEN = []
cscen = scenarios_into(CSCEN)


@cscen("c_multiblock")
def _(day):
    s = CSession("-home-dev-alpha")
    s.user(day + timedelta(hours=9))
    for i in range(6):
        claude_req(s, day + timedelta(hours=9, minutes=i * 3), "claude-opus-4-5-20251101", rnd_usage(),
                   n_blocks=rng.randint(1, 4))
        s.user(day + timedelta(hours=9, minutes=i * 3 + 1), "tool result")


@cscen("c_streaming_keepmax")
def _(day):
    s = CSession("-home-dev-alpha", version="2.1.14")
    for i in range(4):
        t = day + timedelta(hours=11, minutes=i * 5)
        u = rnd_usage()
        m, r = rid("msg_01"), rid("req_011C", 20)
        outs = sorted(rng.sample(range(1, 30), 2)) + [u["output_tokens"]]
        lines = []
        for j, o in enumerate(outs):
            uu = dict(u, output_tokens=o)
            lines.append((t + timedelta(milliseconds=400 * j), uu, None if j < 2 else "end_turn"))
        if i % 2 == 1:   # final line first (order independence)
            lines = [lines[-1]] + lines[:-1]
            lines = [(t + timedelta(milliseconds=400 * j), x[1], x[2]) for j, x in enumerate(lines)]
        for (tt, uu, sr) in lines:
            s.assistant(tt, "claude-sonnet-4-5-20250929", m, r, uu, stop_reason=sr)
            claude_record(tt, "claude-sonnet-4-5-20250929", m, r, uu)


@cscen("c_streaming_across_midnight")
def _(day):
    s = CSession("-home-dev-beta", version="2.1.20")
    t = day + timedelta(hours=23, minutes=59, seconds=59, milliseconds=700)
    m, r = rid("msg_01"), rid("req_011C", 20)
    u = cusage(3, 1200, 0, 45000, 4)
    s.assistant(t, "claude-opus-4-5-20251101", m, r, u)
    claude_record(t, "claude-opus-4-5-20251101", m, r, u)
    t2 = t + timedelta(milliseconds=900)   # next day 00:00:00.600
    u2 = cusage(3, 1200, 0, 45000, 812)
    s.assistant(t2, "claude-opus-4-5-20251101", m, r, u2, stop_reason="end_turn")
    claude_record(t2, "claude-opus-4-5-20251101", m, r, u2)
    # plus normal requests on both sides of midnight
    claude_req(s, day + timedelta(hours=23, minutes=59, seconds=59, milliseconds=999), "claude-opus-4-5-20251101",
               cusage(5, 0, 0, 46000, 120))
    claude_req(s, day + timedelta(days=1), "claude-opus-4-5-20251101", cusage(6, 300, 0, 46100, 99))


@cscen("c_resumed_session_copy")
def _(day):
    a = CSession("-home-dev-gamma")
    b = CSession("-home-dev-gamma")
    reqs = []
    for i in range(4):
        t = day + timedelta(hours=14, minutes=i)
        u = rnd_usage()
        reqs.append((t, u) + claude_req(a, t, "claude-sonnet-4-5-20250929", u, n_blocks=2))
    # resumed session B replays A's history (same message.id/requestId/usage) and continues
    for (t, u, m, r) in reqs:
        b.assistant(t, "claude-sonnet-4-5-20250929", m, r, u)
    for i in range(3):
        claude_req(b, day + timedelta(hours=15, minutes=i), "claude-sonnet-4-5-20250929", rnd_usage())


@cscen("c_subagents_dir")
def _(day):
    s = CSession("-home-dev-delta")
    claude_req(s, day + timedelta(hours=8), "claude-opus-4-5-20251101", rnd_usage(),
               n_blocks=1)
    for a in range(2):
        aid = "a%07x" % rng.getrandbits(28)
        sub = CSession("-home-dev-delta", session_id=s.sid, sidechain=True, agent_id=aid,
                       relpath="claude/projects/-home-dev-delta/%s/subagents/agent-%s.jsonl" % (s.sid, aid))
        FILES["claude/projects/-home-dev-delta/%s/subagents/agent-%s.meta.json" % (s.sid, aid)] = [
            dumps({"agentType": rng.choice(["Explore", "general-purpose"])})]
        sub.user(day + timedelta(hours=8, minutes=1), "Search the code base")
        for i in range(3):
            claude_req(sub, day + timedelta(hours=8, minutes=2 + i), "claude-haiku-4-5-20251001", rnd_usage(),
                       n_blocks=rng.randint(1, 3))
    claude_req(s, day + timedelta(hours=8, minutes=30), "claude-opus-4-5-20251101", rnd_usage())


@cscen("c_legacy_agent_file")
def _(day):
    s = CSession("-home-dev-eps", version="1.0.80")
    claude_req(s, day + timedelta(hours=10), "claude-sonnet-4-20250514", rnd_usage(split=False))
    aid = "%08x" % rng.getrandbits(32)
    sub = CSession("-home-dev-eps", session_id=s.sid, sidechain=True, version="1.0.80",
                   relpath="claude/projects/-home-dev-eps/agent-%s.jsonl" % aid)
    for i in range(3):
        claude_req(sub, day + timedelta(hours=10, minutes=1 + i), "claude-sonnet-4-20250514", rnd_usage(split=False))


@cscen("c_btw_sidechain_replay")
def _(day):
    s = CSession("-home-dev-zeta", version="2.1.60")
    t = day + timedelta(hours=16)
    u = rnd_usage()
    m, r = claude_req(s, t, "claude-opus-4-5-20251101", u, n_blocks=2)
    # /btw replays the same message.id with a new requestId and isSidechain:true -> drop (formats.md 1.3)
    s.sidechain = True
    s.assistant(t + timedelta(seconds=20), "claude-opus-4-5-20251101", m, rid("req_011C", 20), u)
    s.sidechain = False
    claude_req(s, t + timedelta(minutes=2), "claude-opus-4-5-20251101", rnd_usage())


@cscen("c_synthetic")
def _(day):
    s = CSession("-home-dev-eta", version="2.1.30")
    claude_req(s, day + timedelta(hours=12), "claude-sonnet-4-5-20250929", rnd_usage())
    z = cusage(0, 0, 0, 0, 0)
    for txt in ["API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
                "Claude AI usage limit reached|%d" % int((day + timedelta(hours=17)).timestamp())]:
        s.assistant(day + timedelta(hours=12, minutes=1), "<synthetic>", uuid(), None, z,
                    block={"type": "text", "text": txt}, stop_reason="stop_sequence",
                    top_extra={"isApiErrorMessage": True})
    claude_req(s, day + timedelta(hours=12, minutes=5), "claude-sonnet-4-5-20250929", rnd_usage())


@cscen("c_cache_split_variants")
def _(day):
    s = CSession("-home-dev-theta", version="2.1.40")
    t = day + timedelta(hours=13)
    claude_req(s, t, "claude-opus-4-5-20251101", cusage(4, 0, 0, 20000, 300, split=False, cw_total=5000))   # no split
    claude_req(s, t + timedelta(minutes=1), "claude-opus-4-5-20251101", cusage(4, 0, 7000, 20000, 300))      # all 1h
    claude_req(s, t + timedelta(minutes=2), "claude-opus-4-5-20251101", cusage(4, 2500, 3500, 20000, 300))   # mixed
    claude_req(s, t + timedelta(minutes=3), "claude-opus-4-5-20251101", cusage(4, 6100, 0, 20000, 300))      # all 5m


@cscen("c_web_search", documented="web search requests billed $10/1k by Anthropic; peer may not price them")
def _(day):
    s = CSession("-home-dev-iota", version="2.1.50")
    for i in range(3):
        u = rnd_usage()
        u["server_tool_use"] = {"web_search_requests": i + 1, "web_fetch_requests": 0}
        claude_req(s, day + timedelta(hours=9, minutes=i), "claude-sonnet-4-5-20250929", u,
                   block={"type": "server_tool_use", "id": rid("srvtoolu_01"), "name": "web_search",
                          "input": {"query": "duckdb"}})


@cscen("c_missing_requestid", ambiguous="formats.md defines key (message.id, requestId) but says only "
       "'Lines without message.id cannot be deduped'; a line with message.id and no requestId is not covered. "
       "Truth here: no dedup (each line counted).")
def _(day):
    s = CSession("-home-dev-kappa", version="1.0.30")
    u = rnd_usage(split=False)
    m = rid("msg_01")
    t = day + timedelta(hours=10)
    for b in range(2):
        s.assistant(t + timedelta(milliseconds=50 * b), "claude-sonnet-4-20250514", m, None, u)
        claude_record(t, "claude-sonnet-4-20250514", m, None, u)
    claude_req(s, t + timedelta(minutes=1), "claude-sonnet-4-20250514", rnd_usage(split=False))


@cscen("c_missing_message_id")
def _(day):
    s = CSession("-home-dev-lambda", version="1.0.30")
    t = day + timedelta(hours=10)
    u = rnd_usage(split=False)
    for b in range(2):   # identical usage, no message.id -> both kept (formats.md 1.2)
        s.assistant(t + timedelta(seconds=b), "claude-sonnet-4-20250514", None, rid("req_011C", 20), u)
        claude_record(t, "claude-sonnet-4-20250514", None, "x", u)
    claude_req(s, t + timedelta(minutes=1), "claude-sonnet-4-20250514", rnd_usage(split=False))


@cscen("c_model_zoo")
def _(day):
    s = CSession("-home-dev-mu", version="2.1.14")
    for i, m in enumerate(MODELS_C):
        claude_req(s, day + timedelta(hours=6, minutes=7 * i), m, rnd_usage(), n_blocks=rng.randint(1, 3))


@cscen("c_costusd_legacy", documented="ccusage --mode auto uses costUSD when present; compare --mode calculate")
def _(day):
    s = CSession("-home-dev-nu", version="1.0.12")
    for i in range(4):
        u = rnd_usage(split=False)
        t = day + timedelta(hours=7, minutes=i)
        m, r = rid("msg_01"), rid("req_011C", 20)
        cost = [0.0, 0.123456, 1.5, 0.0042][i]
        s.assistant(t, "claude-sonnet-4-20250514", m, r, u, top_extra={"costUSD": cost})
        claude_record(t, "claude-sonnet-4-20250514", m, r, u)


@cscen("c_noise_lines")
def _(day):
    s = CSession("-home-dev-xi", version="2.1.14")
    t = day + timedelta(hours=15)
    s.raw({"type": "summary", "summary": "Fixing the flaky test — テスト", "leafUuid": uuid()})
    s.raw({"type": "file-history-snapshot", "messageId": uuid(), "snapshot": {"trackedFileBackups": {}, "timestamp": ts(t)},
           "isSnapshotUpdate": False})
    s.raw({"type": "queue-operation", "operation": "enqueue", "timestamp": ts(t), "sessionId": s.sid, "content": "hi"})
    s.user(t, "Ünïcödé request: 修正してください 🙏")
    claude_req(s, t + timedelta(seconds=5), "claude-opus-4-5-20251101", rnd_usage(), n_blocks=2)
    add_line(s.path, "")                                               # blank line
    n = add_line(s.path, '{"type":"assistant","message":{"id":"msg_broken","usage":{"input_tokens":5')  # truncated
    PROBLEMS.append((s.path, n, "truncated JSON"))
    s.raw({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
           "timestamp": ts(t + timedelta(minutes=1)), "uuid": uuid(), "level": "info",
           "compactMetadata": {"trigger": "auto", "preTokens": 155000}})
    s.raw({"type": "progress", "timestamp": ts(t), "data": {"type": "hook_progress"}})
    s.raw({"type": "some-future-type", "timestamp": ts(t), "payload": [1, 2, 3]})
    add_line(s.path, "   ")                                            # whitespace-only line
    n = add_line(s.path, "not json at all \u00e9")
    PROBLEMS.append((s.path, n, "not JSON"))
    # very large line (~3 MB tool_use input) that carries usage
    big = {"type": "tool_use", "id": rid("toolu_01"), "name": "Write",
           "input": {"file_path": "/tmp/big.txt", "content": ("αβγ lorem ipsum " * 200000)}}
    claude_req(s, t + timedelta(minutes=2), "claude-opus-4-5-20251101", rnd_usage(), block=big)
    s.user(t + timedelta(minutes=3), [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "ok", "is_error": False}])
    claude_req(s, t + timedelta(minutes=4), "claude-opus-4-5-20251101", rnd_usage(), n_blocks=3)


@cscen("c_last_line_no_newline", documented="a last line without its newline may be a line still being written: "
       "tokaudit leaves it for the next run unless --final (with --final its tokens equal the truth); ccusage reads it")
def _(day):
    s = CSession("-home-dev-omicron", version="2.1.14")
    claude_req(s, day + timedelta(hours=18), "claude-sonnet-4-5-20250929", rnd_usage())
    claude_req(s, day + timedelta(hours=18, minutes=1), "claude-sonnet-4-5-20250929", rnd_usage())
    NO_FINAL_NL.add(s.path)


@cscen("c_spaced_json", documented="formats.md 1.10: ccusage ignores lines without the exact bytes "
       "'\"usage\":{'; tokaudit must accept any whitespace")
def _(day):
    s = CSession("-home-dev-pi", version="2.1.14")
    claude_req(s, day + timedelta(hours=9), "claude-sonnet-4-5-20250929", rnd_usage(), compact=False)
    claude_req(s, day + timedelta(hours=9, minutes=1), "claude-sonnet-4-5-20250929", rnd_usage())


@cscen("c_day_boundary")
def _(day):
    s = CSession("-home-dev-rho", version="2.1.14")
    for dt in [timedelta(hours=23, minutes=59, seconds=59, milliseconds=999), timedelta(days=1),
               timedelta(hours=0, milliseconds=0), timedelta(days=1, hours=23, minutes=59, seconds=59, milliseconds=999)]:
        claude_req(s, day + dt, "claude-haiku-4-5-20251001", rnd_usage(), n_blocks=2)


@cscen("c_dup_in_subagent_file")
def _(day):
    s = CSession("-home-dev-sigma", version="2.1.70")
    t = day + timedelta(hours=20)
    u = rnd_usage()
    m, r = claude_req(s, t, "claude-opus-4-5-20251101", u)
    aid = "a%07x" % rng.getrandbits(28)
    sub = CSession("-home-dev-sigma", session_id=s.sid, sidechain=True, agent_id=aid,
                   relpath="claude/projects/-home-dev-sigma/%s/subagents/agent-%s.jsonl" % (s.sid, aid))
    sub.assistant(t, "claude-opus-4-5-20251101", m, r, u)       # same request copied into the subagent file
    claude_req(sub, t + timedelta(minutes=1), "claude-haiku-4-5-20251001", rnd_usage())


@cscen("c_cross_file_keepmax")
def _(day):
    # placeholder copy in the main file, final copy (more output) in a resumed session file, and vice versa
    a = CSession("-home-dev-chi", version="2.1.14")
    b = CSession("-home-dev-chi", version="2.1.14")
    for i in range(2):
        t = day + timedelta(hours=10, minutes=i)
        u = rnd_usage()
        m, r = rid("msg_01"), rid("req_011C", 20)
        small = dict(u, output_tokens=rng.randint(1, 9))
        first, second = (a, b) if i == 0 else (b, a)
        first.assistant(t, "claude-opus-4-5-20251101", m, r, small)
        second.assistant(t + timedelta(seconds=2), "claude-opus-4-5-20251101", m, r, u, stop_reason="tool_use")
        claude_record(t, "claude-opus-4-5-20251101", m, r, small)
        claude_record(t + timedelta(seconds=2), "claude-opus-4-5-20251101", m, r, u)


@cscen("c_minimal_usage")
def _(day):
    # early Claude Code lines: usage with only input_tokens/output_tokens
    s = CSession("-home-dev-psi", version="0.2.45")
    for i in range(3):
        u = {"input_tokens": rng.randint(100, 4000), "output_tokens": rng.randint(10, 900)}
        claude_req(s, day + timedelta(hours=10, minutes=i), "claude-3-7-sonnet-20250219", u)


@cscen("c_bedrock_ids", documented="regional Bedrock pricing (+10%) may differ between price tables")
def _(day):
    s = CSession("-home-dev-tau", version="2.1.14")
    claude_req(s, day + timedelta(hours=9), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", rnd_usage())
    claude_req(s, day + timedelta(hours=9, minutes=1), "anthropic.claude-haiku-4-5-20251001-v1:0", rnd_usage())


@cscen("c_long_context", documented="pricing-and-tokens.md 2: whole-request >200k rule (tokaudit) vs per-bucket (ccusage)")
def _(day):
    s = CSession("-home-dev-upsilon", version="2.1.14")
    claude_req(s, day + timedelta(hours=9), "claude-sonnet-4-5-20250929", cusage(10, 0, 0, 250000, 1000))
    claude_req(s, day + timedelta(hours=9, minutes=1), "claude-sonnet-4-5-20250929", cusage(10, 2000, 0, 150000, 1000))


@cscen("c_fast_speed", documented="fast mode cost multiplier")
def _(day):
    s = CSession("-home-dev-phi", version="2.1.90")
    u = rnd_usage()
    u["speed"] = "fast"
    claude_req(s, day + timedelta(hours=9), "claude-opus-4-6", u)
    claude_req(s, day + timedelta(hours=9, minutes=2), "claude-opus-4-6", rnd_usage())


@cscen("c_mixed_busy_day")
def _(day):
    for k in range(3):
        s = CSession(rng.choice(["-home-dev-alpha", "-home-dev-mix", "-Users-x-work-app"]))
        t = day + timedelta(hours=rng.randint(1, 20), minutes=rng.randint(0, 59))
        model = rng.choice(MODELS_C[:6])
        for i in range(rng.randint(5, 12)):
            t += timedelta(seconds=rng.randint(3, 90))
            if rng.random() < 0.3:
                s.user(t)
            claude_req(s, t, model, rnd_usage(one_h=rng.random() < 0.2), n_blocks=rng.randint(1, 4))


# ----------------------------------------------------------------------------------------------
# Codex CLI
# ----------------------------------------------------------------------------------------------
XSCEN = []
xscen = scenarios_into(XSCEN)


def rollout(day, hour, model, cli=None):
    """A rollout starting at ``hour`` of ``day`` with its first turn_context; returns it and that time."""
    t = day + timedelta(hours=hour)
    r = XRollout(t, cli=cli) if cli else XRollout(t)
    r.turn(t, model)
    return r, t


def tu(inp, cached, out, reas, cw=None):
    d = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
         "reasoning_output_tokens": reas, "total_tokens": inp + out}
    if cw is not None:
        d["cache_write_input_tokens"] = cw
    return d


def tadd(a, b):
    r = {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}
    return r


class XRollout:
    def __init__(self, start, cli="0.104.0", sid=None, archived=False, meta_extra=None, model_provider="openai"):
        self.sid = sid or uuid()
        self.start = start
        sub = "archived_sessions" if archived else "sessions"
        self.path = "codex/%s/%s/rollout-%s-%s.jsonl" % (
            sub, start.strftime("%Y/%m/%d"), start.strftime("%Y-%m-%dT%H-%M-%S"), self.sid)
        self.total = None
        self.model = None
        self.cli = cli
        meta = {"id": self.sid, "timestamp": ts(start), "cwd": "/home/dev/proj", "originator": "codex_cli_rs",
                "cli_version": cli, "source": "cli", "model_provider": model_provider,
                "base_instructions": {"text": "You are Codex."}}
        if meta_extra:
            meta.update(meta_extra)
        self.meta = meta
        self.line({"timestamp": ts(start), "type": "session_meta", "payload": meta})

    def line(self, obj):
        return add_line(self.path, dumps(obj))

    def turn(self, when, model, effort="medium"):
        self.model = model
        self.line({"timestamp": ts(when), "type": "turn_context",
                   "payload": {"turn_id": uuid(), "cwd": "/home/dev/proj", "approval_policy": "on-request",
                               "sandbox_policy": {"type": "workspace-write"}, "model": model, "effort": effort,
                               "summary": "auto"}})

    def items(self, when):
        self.line({"timestamp": ts(when), "type": "event_msg", "payload": {"type": "user_message", "message": "fix it", "images": []}})
        self.line({"timestamp": ts(when), "type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Thinking**"}], "encrypted_content": "gAAAA"}})
        self.line({"timestamp": ts(when), "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": rid("call_", 24)}})

    def null_count(self, when):
        self.line({"timestamp": ts(when), "type": "event_msg",
                   "payload": {"type": "token_count", "info": None,
                               "rate_limits": {"primary": {"used_percent": 12.0, "window_minutes": 300}}}})

    def count(self, when, last, book_it=True, reemit=False, info_extra=None, total_override=None):
        """Emit a token_count advancing the cumulative total by `last` (unless reemit)."""
        if not reemit:
            self.total = tadd(self.total or {}, last) if total_override is None else total_override
            self.last = last
        info = {"total_token_usage": self.total, "last_token_usage": self.last, "model_context_window": 272000}
        if info_extra:
            info.update(info_extra)
        self.line({"timestamp": ts(when), "type": "event_msg",
                   "payload": {"type": "token_count", "info": info,
                               "rate_limits": {"primary": {"used_percent": 14.0, "window_minutes": 300}}}})
        if book_it and not reemit:
            xbook(when, self.model or "(unknown)", last)

    def agent_msg(self, when):
        self.line({"timestamp": ts(when), "type": "event_msg", "payload": {"type": "agent_message", "message": "Done — ✅"}})


def xbook(when, model, d):
    cached = min(d["cached_input_tokens"], d["input_tokens"])
    book("codex", when, model, input=d["input_tokens"] - cached, cache_read=cached, output=d["output_tokens"],
         reasoning=d["reasoning_output_tokens"], cache_write=d.get("cache_write_input_tokens", 0),
         cache_write_5m=d.get("cache_write_input_tokens", 0))


def rlast(scale=1):
    inp = rng.randint(8000, 90000) * scale
    cached = rng.choice([0, int(inp * rng.uniform(0.5, 0.95)) // 128 * 128])
    out = rng.randint(50, 3000)
    reas = rng.randint(0, out)
    return tu(inp, cached, out, reas)


def xturns(r, t, model, n, reemit_p=0.5, items=True):
    for i in range(n):
        t += timedelta(seconds=rng.randint(4, 60))
        if items:
            r.items(t)
        r.count(t, rlast())
        if rng.random() < reemit_p:
            t += timedelta(milliseconds=rng.randint(300, 5000))
            r.agent_msg(t)
            r.count(t, None, reemit=True)
    return t


@xscen("x_basic_reemits")
def _(day):
    t = day + timedelta(hours=10)
    r = XRollout(t)
    r.null_count(t + timedelta(seconds=1))
    r.turn(t + timedelta(seconds=2), "gpt-5-codex")
    t = xturns(r, t + timedelta(seconds=2), "gpt-5-codex", 8, reemit_p=0.9)
    r.null_count(t + timedelta(seconds=1))


@xscen("x_model_switch")
def _(day):
    r, t = rollout(day, 9, "gpt-5", cli="0.46.0")
    t = xturns(r, t, "gpt-5", 3)
    r.turn(t + timedelta(seconds=1), "gpt-5.1-codex-mini")
    t = xturns(r, t + timedelta(seconds=1), "gpt-5.1-codex-mini", 3)
    r.turn(t + timedelta(seconds=1), "gpt-5-codex", effort="high")
    xturns(r, t + timedelta(seconds=1), "gpt-5-codex", 2)


@xscen("x_span_midnight")
def _(day):
    t = day + timedelta(hours=23, minutes=58)
    r = XRollout(t)
    r.turn(t, "gpt-5.1-codex")
    for sec in (20, 70, 110):                       # 23:58:20 .. 23:59:50
        r.count(t + timedelta(seconds=sec), rlast())
    r.count(day + timedelta(days=1, seconds=5), None, reemit=True)   # re-emit after midnight: no row
    r.count(day + timedelta(hours=23, minutes=59, seconds=59, milliseconds=999), rlast())
    r.count(day + timedelta(days=1), rlast())       # exactly 00:00:00.000
    for sec in (30, 95):
        r.count(day + timedelta(days=1, seconds=sec), rlast())


def fork_parent(t0, model, requests, cli=None, reemit_after=None):
    """A parent rollout of ``requests`` requests (one re-emitted after request ``reemit_after``); returns it, the time
    of its last request and its (total, last) usage after each event, which a fork replays."""
    p = XRollout(t0, cli=cli) if cli else XRollout(t0)
    p.turn(t0, model)
    t = t0
    hist = []
    for i in range(requests):
        t += timedelta(seconds=rng.randint(10, 50))
        p.count(t, rlast())
        hist.append((dict(p.total), dict(p.last)))
        if i == reemit_after:
            p.count(t + timedelta(seconds=1), None, reemit=True)
            hist.append((dict(p.total), dict(p.last)))
    return p, t, hist


def replay_burst(c, fork_at, hist, step_ms, model=None):
    """A fork's replay of its parent's events, all in the fork's second (each after a replayed turn_context if
    ``model``): skipped by the rule, never booked."""
    for k, (tot, last) in enumerate(hist):
        if model:
            c.turn(fork_at + timedelta(milliseconds=step_ms * k), model)
        c.total, c.last = tot, last
        c.count(fork_at + timedelta(milliseconds=step_ms * k), None, reemit=True)


def own_requests(c, t, n):
    """The child's own requests after its burst."""
    for i in range(n):
        t += timedelta(seconds=rng.randint(5, 40))
        c.count(t, rlast())


def thread_spawn_meta(parent):
    return {"source": {"subagent": {"thread_spawn": {"parent_thread_id": parent.sid, "depth": 1}}}}


@xscen("x_fork_thread_spawn")
def _(day):
    p, t, hist = fork_parent(day + timedelta(hours=13), "gpt-5-codex", 5, reemit_after=1)
    fork_at = t + timedelta(seconds=30)
    # parent goes on after the fork
    for i in range(2):
        t += timedelta(seconds=60)
        p.count(t, rlast())
    # child: two session_meta lines (child then parent), then the replayed burst stamped with the fork second
    c = XRollout(fork_at, meta_extra=thread_spawn_meta(p))
    c.line({"timestamp": ts(fork_at), "type": "session_meta", "payload": p.meta})
    replay_burst(c, fork_at, hist[:4], 3, model="gpt-5-codex")
    tc = fork_at + timedelta(seconds=9)
    c.turn(tc, "gpt-5-codex")                                               # child's own turn
    own_requests(c, tc, 3)


@xscen("x_fork_forked_from_id")
def _(day):
    p, t, hist = fork_parent(day + timedelta(hours=15), "gpt-5.1-codex", 4, cli="0.60.1")
    fork_at = t + timedelta(minutes=5)
    c = XRollout(fork_at, cli="0.60.1", meta_extra={"forked_from_id": p.sid})
    c.turn(fork_at, "gpt-5.1-codex")
    replay_burst(c, fork_at, hist, 2)
    own_requests(c, fork_at + timedelta(seconds=12), 3)


@xscen("x_fork_model_only_before_burst")
def _(day):
    # like x_fork_thread_spawn, but the only turn_context precedes the replayed burst
    p, t, hist = fork_parent(day + timedelta(hours=13), "gpt-5-codex", 3)
    fork_at = t + timedelta(seconds=30)
    c = XRollout(fork_at, meta_extra=thread_spawn_meta(p))
    c.line({"timestamp": ts(fork_at), "type": "session_meta", "payload": p.meta})
    c.turn(fork_at, "gpt-5-codex")
    replay_burst(c, fork_at, hist, 3)
    own_requests(c, fork_at + timedelta(seconds=9), 2)


@xscen("x_fork_parent_missing")
def _(day):
    # child whose parent rollout is not on disk: the leading same-second burst must still be skipped
    fork_at = day + timedelta(hours=11)
    parent_id = uuid()
    c = XRollout(fork_at, meta_extra={"source": {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}})
    c.line({"timestamp": ts(fork_at), "type": "session_meta", "payload": {"id": parent_id, "timestamp": ts(fork_at - timedelta(hours=1)),
                                                                          "cwd": "/home/dev/proj", "originator": "codex_cli_rs", "cli_version": "0.104.0"}})
    c.turn(fork_at, "gpt-5-codex")
    tot = None
    for k in range(3):
        last = rlast()
        tot = tadd(tot or {}, last)
        c.total, c.last = tot, last
        c.count(fork_at + timedelta(milliseconds=4 * k), None, reemit=True)
    tc = fork_at + timedelta(seconds=10)
    for i in range(3):
        tc += timedelta(seconds=rng.randint(5, 40))
        c.count(tc, rlast())


@xscen("x_compaction")
def _(day):
    r, t = rollout(day, 16, "gpt-5-codex")
    t = xturns(r, t, "gpt-5-codex", 4)
    t += timedelta(seconds=3)
    r.line({"timestamp": ts(t), "type": "compacted", "payload": {"message": "", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary"}]}]}})
    r.line({"timestamp": ts(t), "type": "event_msg", "payload": {"type": "context_compacted"}})
    r.count(t + timedelta(seconds=1), tu(30000, 0, 900, 400))     # the compaction request itself
    r.turn(t + timedelta(seconds=2), "gpt-5-codex")
    xturns(r, t + timedelta(seconds=2), "gpt-5-codex", 3)


@xscen("x_no_model", documented="formats.md 2.3: no turn_context -> tokaudit model_unknown (unpriced); ccusage prices as gpt-5 isFallback")
def _(day):
    t = day + timedelta(hours=8)
    r = XRollout(t, cli="0.30.0")
    for i in range(3):
        t += timedelta(seconds=20)
        r.count(t, rlast())


@xscen("x_info_model", ambiguous="formats.md 2.3 allows info.model as model source; field placement illustrative")
def _(day):
    t = day + timedelta(hours=8)
    r = XRollout(t, cli="0.70.0")
    r.model = "gpt-5.1-codex-mini"
    for i in range(3):
        t += timedelta(seconds=20)
        r.count(t, rlast(), info_extra={"model": "gpt-5.1-codex-mini"})


@xscen("x_archived_copy")
def _(day):
    r, t = rollout(day, 12, "gpt-5")
    xturns(r, t, "gpt-5", 4)
    # identical copy under archived_sessions/ (same relative path) -> active copy wins, count once
    arch = r.path.replace("codex/sessions/", "codex/archived_sessions/")
    FILES[arch] = list(FILES[r.path])
    # an archived-only rollout counts normally
    t2 = day + timedelta(hours=14)
    a = XRollout(t2, archived=True)
    a.turn(t2, "gpt-5")
    xturns(a, t2, "gpt-5", 3)


@xscen("x_lost_event", documented="formats.md 2.1: a row is the difference of totals, so the request whose "
       "token_count line was lost on disk is counted in the next row (tokaudit = truth); ccusage sums last_token_usage")
def _(day):
    # one token_count line is corrupted on disk: the next total covers two requests (rule: row = delta of totals)
    r, t = rollout(day, 17, "gpt-5-codex")
    t = xturns(r, t, "gpt-5-codex", 2, reemit_p=0)
    t += timedelta(seconds=20)
    lost = rlast()
    r.total = tadd(r.total, lost)
    n = r.line({"timestamp": ts(t), "type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": r.total}}})
    FILES[r.path][n - 1] = FILES[r.path][n - 1][: len(FILES[r.path][n - 1]) // 2]   # truncate -> invalid JSON
    PROBLEMS.append((r.path, n, "truncated token_count"))
    # the lost request's tokens appear in the next delta; book them on the next event's timestamp
    t += timedelta(seconds=20)
    nxt = rlast()
    r.count(t, nxt, book_it=False)
    xbook(t, "gpt-5-codex", tadd(lost, nxt))
    xturns(r, t, "gpt-5-codex", 1, reemit_p=0)


@xscen("x_cached_gt_input", ambiguous="formats.md 2: 'Clamp cached_input_tokens <= input_tokens'")
def _(day):
    r, t = rollout(day, 9, "gpt-5")
    r.count(t + timedelta(seconds=5), tu(1000, 1500, 40, 0))
    r.count(t + timedelta(seconds=9), rlast())
    r.count(t + timedelta(seconds=15), rlast())


@xscen("x_cache_write_field", ambiguous="formats.md 2: cache_write_input_tokens, 'whether it sits inside input_tokens is unverified'")
def _(day):
    r, t = rollout(day, 9, "gpt-5-codex", cli="0.110.0")
    for i in range(2):
        t += timedelta(seconds=20)
        d = rlast()
        d["cache_write_input_tokens"] = 2048
        r.count(t, d)


@xscen("x_total_only")
def _(day):
    # token_count events carrying only total_token_usage (no last_token_usage)
    r, t = rollout(day, 10, "gpt-5", cli="0.39.0")
    for i in range(4):
        t += timedelta(seconds=30)
        last = rlast()
        r.total = tadd(r.total or {}, last)
        r.line({"timestamp": ts(t), "type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": r.total, "model_context_window": 272000}}})
        xbook(t, "gpt-5", last)
        if i == 1:
            r.line({"timestamp": ts(t + timedelta(seconds=1)), "type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": r.total, "model_context_window": 272000}}})


@xscen("x_last_only", ambiguous="formats.md 2.1 defines rows as deltas of total_token_usage; events with only last_token_usage are not covered. Truth: each event's last_token_usage.")
def _(day):
    r, t = rollout(day, 10, "gpt-5", cli="0.20.0")
    for i in range(3):
        t += timedelta(seconds=30)
        last = rlast()
        r.line({"timestamp": ts(t), "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": last, "model_context_window": 272000}}})
        xbook(t, "gpt-5", last)


@xscen("x_copied_rollout", ambiguous="same rollout file present twice under different sessions/ paths; formats.md 2.2 cross-file dedupe on (timestamp, model, five token fields) -> truth counts once")
def _(day):
    r, t = rollout(day, 12, "gpt-5-codex")
    xturns(r, t, "gpt-5-codex", 3)
    cp = r.path.replace(t.strftime("%Y/%m/%d"), (t + timedelta(days=1)).strftime("%Y/%m/%d"))
    FILES[cp] = list(FILES[r.path])


@xscen("x_many_models")
def _(day):
    for k, m in enumerate(["gpt-5", "gpt-5-codex", "gpt-5.1-codex-mini", "gpt-5.1-codex", "gpt-5-mini", "gpt-5.1",
                           "gpt-5.2-codex", "gpt-5.3-codex", "gpt-5.1-codex-max"]):
        t = day + timedelta(hours=1 + 2 * k, minutes=rng.randint(0, 59))
        r = XRollout(t)
        r.turn(t, m)
        xturns(r, t, m, rng.randint(1, 3))


@xscen("x_session_spans_days_file_dated_earlier")
def _(day):
    # rollout started late on day D, most events next day (file lives under D's folder)
    r, t = rollout(day, 22, "gpt-5-codex")
    r.count(t + timedelta(minutes=10), rlast())
    t2 = day + timedelta(days=1, hours=9)
    r.turn(t2, "gpt-5-codex")
    xturns(r, t2, "gpt-5-codex", 3)


# ----------------------------------------------------------------------------------------------
def main():
    scen_list = [("claude",) + s for s in CSCEN] + [("codex",) + s for s in XSCEN]
    meta = []
    for i, (src, name, f, amb, doc) in enumerate(scen_list):
        day = scen_day(i)
        f(day)
        d0, d1 = day.strftime("%Y-%m-%d"), (day + timedelta(days=1)).strftime("%Y-%m-%d")
        meta.append({"source": src, "scenario": name, "days": [d0, d1], "ambiguous": amb, "documented": doc})
    # claude truth from the keep-max table
    for (tot, when, model, k) in CLAUDE_REQ.values():
        if model == "<synthetic>":
            continue
        book("claude", when, model, **k)
    for (when, model, k) in CLAUDE_NOKEY:
        if model == "<synthetic>":
            continue
        book("claude", when, model, **k)
    for path, lines in FILES.items():
        full = os.path.join(OUT, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = "\n".join(lines)
        if path not in NO_FINAL_NL:
            data += "\n"
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(data)
    labels = {"seed": SEED, "truth": TRUTH, "scenarios": meta,
              "expected_problems": [{"file": p, "line": n, "why": w} for (p, n, w) in PROBLEMS],
              "no_final_newline": sorted(NO_FINAL_NL)}
    with open(os.path.join(OUT, "labels.json"), "w") as fh:
        json.dump(labels, fh, indent=1, sort_keys=True)


main()
