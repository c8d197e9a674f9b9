#!/usr/bin/env python3
"""Run tokaudit and ccusage on a generated tree and compare per-day totals with labels.json.

usage: compare.py OUT WORK      (OUT from gen.py; WORK = scratch dir for dbs/outputs)

Environment: CCUSAGE (the ccusage 20.0.24 binary), PY (a Python with tokaudit's dependencies),
TOKAUDIT_CHECKOUT (the checkout under test, put on PYTHONPATH). See run.sh.
"""
import json
import os
import subprocess
import sys

OUT, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.makedirs(WORK, exist_ok=True)
HOME = os.path.join(WORK, "home")
EMPTY = os.path.join(WORK, "empty")
for d in (HOME, EMPTY):
    os.makedirs(d, exist_ok=True)
CC = os.environ["CCUSAGE"]
PY = os.environ.get("PY", sys.executable)
ENV = {"PATH": "/usr/bin:/bin", "HOME": HOME, "PYTHONPATH": os.environ["TOKAUDIT_CHECKOUT"], "TZ": "UTC",
       "XDG_CONFIG_HOME": os.path.join(HOME, ".config"), "NO_COLOR": "1"}


def run(cmd, env=None, cwd=WORK):
    e = dict(ENV)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True)
    if p.returncode not in (0,):
        sys.stderr.write("cmd failed %s rc=%s\n%s\n" % (cmd, p.returncode, p.stderr[-3000:]))
    return p


def ta(*args):
    return run([PY, "-m", "tokaudit.cli"] + list(args), env={"CLAUDE_CONFIG_DIR": EMPTY, "CODEX_HOME": EMPTY})


labels = json.load(open(os.path.join(OUT, "labels.json")))
res = {"ingest": {}, "problems": {}}


def ingest(name, path, final=False):
    db = os.path.join(WORK, name + ".duckdb")
    if os.path.exists(db):
        os.remove(db)
    extra = ["--final"] if final else []
    r1 = ta("ingest", "--db", db, "--json", "-q", *extra, path)
    u1 = ta("usage", "--db", db, "--by", "day", "--json").stdout
    r2 = ta("ingest", "--db", db, "--json", "-q", *extra, path)
    u2 = ta("usage", "--db", db, "--by", "day", "--json").stdout
    j1 = json.loads(r1.stdout) if r1.stdout.strip() else {}
    j2 = json.loads(r2.stdout) if r2.stdout.strip() else {}
    res["ingest"][name] = {"first": {k: j1.get(k) for k in ("files", "lines", "rows")},
                           "second": {k: j2.get(k) for k in ("files", "lines", "rows")},
                           "usage_identical_after_second_ingest": u1 == u2,
                           "problems": [(p["path"].replace(OUT + "/", ""), p["line_no"], p["kind"]) for p in j1.get("problems", [])],
                           "skipped_by_rule": j1.get("skipped_by_rule")}
    rows = json.loads(u2)
    sess = json.loads(ta("usage", "--db", db, "--by", "session", "--json").stdout)
    model = json.loads(ta("usage", "--db", db, "--by", "model", "--json").stdout)
    json.dump({"day": rows, "session": sess, "model": model}, open(os.path.join(WORK, name + ".usage.json"), "w"), indent=1)
    return {r["day"]: r for r in rows["rows"]}


ta_c = ingest("ta_claude", os.path.join(OUT, "claude"))
ta_c_final = ingest("ta_claude_final", os.path.join(OUT, "claude"), final=True)
ta_x = ingest("ta_codex", os.path.join(OUT, "codex"))

cenv = {"CLAUDE_CONFIG_DIR": os.path.join(OUT, "claude"), "CODEX_HOME": EMPTY}
xenv = {"CLAUDE_CONFIG_DIR": EMPTY, "CODEX_HOME": os.path.join(OUT, "codex")}
os.makedirs(os.path.join(EMPTY, "projects"), exist_ok=True)
cc_c = json.loads(run([CC, "claude", "daily", "--offline", "--json", "-z", "UTC", "--mode", "calculate"], env=cenv).stdout)
cc_c_auto = json.loads(run([CC, "claude", "daily", "--offline", "--json", "-z", "UTC"], env=cenv).stdout)
cc_x = json.loads(run([CC, "codex", "daily", "--offline", "--json", "-z", "UTC"], env=xenv).stdout)
json.dump({"claude_calc": cc_c, "claude_auto": cc_c_auto, "codex": cc_x}, open(os.path.join(WORK, "ccusage.json"), "w"), indent=1)
cc_c = {r["date"]: r for r in cc_c.get("daily", [])}
cc_c_auto = {r["date"]: r for r in cc_c_auto.get("daily", [])}
cc_x = {r["date"]: r for r in cc_x.get("daily", [])}

scen_of = {}
for s in labels["scenarios"]:
    for d in s["days"]:
        scen_of[(s["source"], d)] = s


def truth_day(src, day):
    t = {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "reasoning": 0, "cost": None}
    for m, k in labels["truth"][src].get(day, {}).items():
        for x in ("input", "cache_write", "cache_read", "output", "reasoning"):
            t[x] += k[x]
    return t


def ta_day(r):
    if not r:
        return {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "reasoning": 0, "cost": 0.0}
    return {"input": r["input_tokens"], "cache_write": r["cache_write_tokens"], "cache_read": r["cache_read_tokens"],
            "output": r["output_tokens"], "reasoning": r.get("reasoning_tokens") or 0, "cost": r.get("cost_usd"),
            "unpriced_calls": r.get("unpriced_calls")}


def cc_day(r, src):
    if not r:
        return {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "reasoning": 0, "cost": 0.0}
    return {"input": r["inputTokens"], "cache_write": r["cacheCreationTokens"], "cache_read": r["cacheReadTokens"],
            "output": r["outputTokens"], "reasoning": r.get("reasoningOutputTokens", 0),
            "cost": r.get("totalCost", r.get("costUSD"))}


KS = ("input", "cache_write", "cache_read", "output")
table = []
for src, tad, ccd in (("claude", ta_c, cc_c), ("codex", ta_x, cc_x)):
    days = sorted(set(labels["truth"][src]) | set(tad) | set(ccd))
    for day in days:
        t, a, c = truth_day(src, day), ta_day(tad.get(day)), cc_day(ccd.get(day), src)
        s = scen_of.get((src, day), {})
        row = {"source": src, "day": day, "scenario": s.get("scenario"), "truth": t, "tokaudit": a, "ccusage": c,
               "ta_eq_truth": all(a[k] == t[k] for k in KS), "cc_eq_truth": all(c[k] == t[k] for k in KS),
               "ta_eq_cc": all(a[k] == c[k] for k in KS)}
        if src == "codex":
            row["reasoning_ta_cc_truth"] = (a["reasoning"], c["reasoning"], t["reasoning"])
        if src == "claude":
            f = ta_day(ta_c_final.get(day))
            row["tokaudit_final"] = f
            row["ta_final_eq_truth"] = all(f[k] == t[k] for k in KS)
            row["cc_auto_cost"] = cc_day(cc_c_auto.get(day), src)["cost"]
        ac, cc_ = a.get("cost") or 0.0, c.get("cost") or 0.0
        row["cost_rel_diff"] = (abs(ac - cc_) / max(abs(cc_), 1e-12)) if (ac or cc_) else 0.0
        row["ambiguous"], row["documented"] = s.get("ambiguous"), s.get("documented")
        table.append(row)
res["table"] = table

# ---- incremental ingest: ingest a truncated copy (cut at a seeded byte offset, often mid-line), then the full files
import random, shutil
rs = random.Random(labels["seed"])
inc = {}
for src in ("claude", "codex"):
    base = os.path.join(WORK, "inc", src)
    if os.path.exists(base):
        shutil.rmtree(base)
    shutil.copytree(os.path.join(OUT, src), base)
    full = {}
    for dp, dn, fn in os.walk(base):
        for f in fn:
            if f.endswith(".jsonl"):
                pth = os.path.join(dp, f)
                data = open(pth, "rb").read()
                full[pth] = data
                cut = rs.randint(0, len(data))
                open(pth, "wb").write(data[:cut])
    db = os.path.join(WORK, "inc_%s.duckdb" % src)
    if os.path.exists(db):
        os.remove(db)
    ta("ingest", "--db", db, "-q", base)
    for pth, data in full.items():
        open(pth, "wb").write(data)
    r2 = json.loads(ta("ingest", "--db", db, "--json", "-q", base).stdout)
    rows = {r["day"]: r for r in json.loads(ta("usage", "--db", db, "--by", "day", "--json").stdout)["rows"]}
    ref = ta_c if src == "claude" else ta_x
    diffs = []
    for day in sorted(set(rows) | set(ref)):
        a, b = ta_day(rows.get(day)), ta_day(ref.get(day))
        if any(a[k] != b[k] for k in KS):
            diffs.append({"day": day, "scenario": scen_of.get((src, day), {}).get("scenario"),
                          "incremental": {k: a[k] for k in KS}, "fresh": {k: b[k] for k in KS}})
    inc[src] = {"second_run_files": r2.get("files"), "second_run_lines": r2.get("lines"), "diffs": diffs}
res["incremental"] = inc

# ---- other time zones: tokaudit vs ccusage only
tzres = {}
for tz in ("America/Los_Angeles", "Asia/Kolkata"):
    for src, name, env in (("claude", "ta_claude_final", cenv), ("codex", "ta_codex", xenv)):
        db = os.path.join(WORK, name + ".duckdb")
        a = {r["day"]: r for r in json.loads(ta("usage", "--db", db, "--by", "day", "--tz", tz, "--json").stdout)["rows"]}
        c = json.loads(run([CC, src, "daily", "--offline", "--json", "-z", tz] + (["--mode", "calculate"] if src == "claude" else []), env=env).stdout)
        c = {r["date"]: r for r in c.get("daily", [])}
        diffs = []
        for day in sorted(set(a) | set(c)):
            x, y = ta_day(a.get(day)), cc_day(c.get(day), src)
            if any(x[k] != y[k] for k in KS):
                diffs.append({"day": day, "tokaudit": {k: x[k] for k in KS}, "ccusage": {k: y[k] for k in KS}})
        tzres["%s %s" % (src, tz)] = diffs
res["tz"] = tzres
exp = {(p["file"], p["line"]) for p in labels["expected_problems"]}
got = set()
for name in ("ta_claude", "ta_codex"):
    for (p, n, k) in res["ingest"][name]["problems"]:
        got.add((p, n))
res["problems"] = {"expected": sorted(exp), "reported": sorted(got), "missing": sorted(exp - got), "unexpected": sorted(got - exp)}
json.dump(res, open(os.path.join(WORK, "result.json"), "w"), indent=1)

# ---- text summary
print("seed", labels["seed"], "OUT", OUT)
for name, v in res["ingest"].items():
    print("%-16s first=%s second=%s identical_after_reingest=%s" % (name, v["first"]["lines"], v["second"]["files"], v["usage_identical_after_second_ingest"]))
print("problems expected=%d reported=%d missing=%s unexpected=%s" % (len(exp), len(got), res["problems"]["missing"], res["problems"]["unexpected"]))
for src, v in res["incremental"].items():
    print("incremental %s: second run files=%s; days differing from fresh ingest: %s" % (src, v["second_run_files"], json.dumps(v["diffs"])))
for k, v in res["tz"].items():
    print("tz %s: days where tokaudit(--final) != ccusage: %d %s" % (k, len(v), json.dumps([d["day"] for d in v])))
print("%-6s %-10s %-34s %-5s %-5s %-5s %-8s %s" % ("src", "day", "scenario", "TA=T", "CC=T", "TA=CC", "cost%", "notes"))
for r in table:
    note = []
    for k in KS:
        vals = (r["tokaudit"][k], r["ccusage"][k], r["truth"][k])
        if len(set(vals)) > 1:
            note.append("%s ta=%d cc=%d truth=%d" % (k, *vals))
    if r["source"] == "claude" and not r["ta_eq_truth"] and r["ta_final_eq_truth"]:
        note.append("(ta --final == truth)")
    if r["source"] == "codex" and len(set(r["reasoning_ta_cc_truth"])) > 1:
        note.append("reasoning ta=%s cc=%s truth=%s" % r["reasoning_ta_cc_truth"])
    print("%-6s %-10s %-34s %-5s %-5s %-5s %7.2f%% ta$=%.6f cc$=%.6f %s" % (
        r["source"], r["day"], (r["scenario"] or "?")[:34], "ok" if r["ta_eq_truth"] else "DIFF",
        "ok" if r["cc_eq_truth"] else "DIFF", "ok" if r["ta_eq_cc"] else "DIFF", 100 * r["cost_rel_diff"],
        r["tokaudit"].get("cost") or 0.0, r["ccusage"].get("cost") or 0.0, "; ".join(note)))
