#!/usr/bin/env python3
"""score.py OUT_ROOT TAG SEED... : reads OUT_ROOT/<seed>/{labels.json,ingest.json,usage.json,findings.json,sessions}
and prints a markdown table (also per-session details to OUT_ROOT/details-TAG.json)."""
import json
import os
import statistics
import sys

root, tag, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []          # one per labelled session
ingest_notes = []
mismatches = []
missing = []
unpriced = {}
for seed in seeds:
    d = os.path.join(root, seed)
    labels = json.load(open(os.path.join(d, "labels.json")))
    ing = json.load(open(os.path.join(d, "ingest.json")))
    usage = json.load(open(os.path.join(d, "usage.json")))
    fnd = json.load(open(os.path.join(d, "findings.json")))
    sessions_all = set(open(os.path.join(d, "sessions.txt")).read().split()) if os.path.exists(os.path.join(d, "sessions.txt")) else set()
    probs = ing.get("problems") or []
    ingest_notes.append(dict(seed=seed, lines=ing.get("lines"), rows=ing.get("rows"), files=ing.get("files"),
                             problems=len(probs), problem_list=probs[:50], skipped=ing.get("skipped_by_rule"),
                             doubts=ing.get("format_doubts")))
    for m in usage.get("unpriced_models") or []:
        unpriced[m] = unpriced.get(m, 0) + 1
    urow = {r["session"]: r for r in usage["rows"]}
    flist = fnd if isinstance(fnd, list) else (fnd.get("findings") or [])
    fby = {}
    for f in flist:
        if f.get("detector") != "economic_dos":
            continue
        sid = f.get("session_id") or f.get("session")
        fby.setdefault(sid, []).append(f)
    for lab in labels:
        sid = lab["session"]
        u = urow.get(sid)
        e = lab["expected"]
        if u is None and lab["cohort"] != "mcp-alone":
            missing.append((seed, sid))
        if u is not None:
            got = dict(input=u["input_tokens"], cache_read=u["cache_read_tokens"], cache_write=u["cache_write_tokens"],
                       output=u["output_tokens"])
            diff = {k: (e[k], got[k]) for k in got if e[k] != got[k]}
            if diff:
                mismatches.append(dict(seed=seed, session=sid, cohort=lab["cohort"], family=lab["family"],
                                       diff=diff, calls_expected=e["requests"], calls_got=u.get("calls")))
        fs = fby.get(sid, [])
        fire = None
        for f in fs:
            ev = f.get("evidence") or {}
            if ev.get("fire_turn") is not None:
                fire = ev["fire_turn"]
        rows.append(dict(seed=seed, session=sid, cohort=lab["cohort"], family=lab["family"], attack=lab["attack"],
                         onset=lab["onset"], knobs=lab.get("knobs"), flagged=bool(fs), fire_turn=fire,
                         cost=(u or {}).get("cost_usd"), severity=[f.get("severity") for f in fs],
                         in_store=sid in sessions_all or u is not None))

# cohort benign median cost (per seed and cohort)
med = {}
for r in rows:
    if not r["attack"] and r["cost"] is not None:
        med.setdefault((r["seed"], r["cohort"]), []).append(r["cost"])
med = {k: statistics.median(v) for k, v in med.items()}


def pct(a, b):
    return "%d/%d (%.0f%%)" % (a, b, 100.0 * a / b) if b else "0/0"


out = []
out.append("## probe 17 results: %s (seeds %s)\n" % (tag, ", ".join(seeds)))
att = [r for r in rows if r["attack"]]
ben = [r for r in rows if not r["attack"]]
num = den = 0.0
for r in att:
    m = med.get((r["seed"], r["cohort"]))
    if r["cost"] is None or m is None:
        continue
    ex = max(0.0, r["cost"] - m)
    den += ex
    if r["flagged"]:
        num += ex
lat = [r["fire_turn"] - r["onset"] for r in att if r["flagged"] and r["fire_turn"] is not None and r["onset"] is not None]
out.append("| metric | value |\n|---|---|")
out.append("| attacks flagged (recall) | %s |" % pct(sum(r["flagged"] for r in att), len(att)))
out.append("| benign flagged (FPR) | %s |" % pct(sum(r["flagged"] for r in ben), len(ben)))
out.append("| cost-weighted recall | %s |" % ("%.3f" % (num / den) if den else "n/a"))
out.append("| median latency (fire_turn − onset) | %s (n=%d) |" % (statistics.median(lat) if lat else "n/a", len(lat)))
out.append("| ingest problems (sum over seeds) | %d |" % sum(n["problems"] for n in ingest_notes))
out.append("| per-session token mismatches | %d |" % len(mismatches))
out.append("| labelled sessions missing from usage | %d |" % len(missing))
out.append("")
out.append("### per cohort (format)\n\n| cohort | attacks flagged | benign flagged |\n|---|---|---|")
for c in sorted({r["cohort"] for r in rows}):
    a = [r for r in att if r["cohort"] == c]
    b = [r for r in ben if r["cohort"] == c]
    out.append("| %s | %s | %s |" % (c, pct(sum(r["flagged"] for r in a), len(a)), pct(sum(r["flagged"] for r in b), len(b))))
out.append("\n### per family\n\n| family | attack | flagged/total | by cohort (flagged/total) |\n|---|---|---|---|")
fams = sorted({(r["attack"], r["family"]) for r in rows}, key=lambda x: (not x[0], x[1]))
for a_, f in fams:
    rs = [r for r in rows if r["family"] == f and r["attack"] == a_]
    byc = {}
    for r in rs:
        x = byc.setdefault(r["cohort"], [0, 0])
        x[0] += r["flagged"]
        x[1] += 1
    out.append("| %s | %s | %s | %s |" % (f, "attack" if a_ else "benign", pct(sum(r["flagged"] for r in rs), len(rs)),
                                        ", ".join("%s %d/%d" % (c, v[0], v[1]) for c, v in sorted(byc.items()))))
out.append("\n### attacks by stealth knob\n")
for st in (True, False):
    rs = [r for r in att if (r["knobs"] or {}).get("stealth") == st]
    out.append("- stealth=%s: %s" % (st, pct(sum(r["flagged"] for r in rs), len(rs))))
out.append("\n### ingest\n")
for n in ingest_notes:
    out.append("- seed %s: files %s; lines %s; rows %s; problems %d; skipped %s; format_doubts %s" % (
        n["seed"], json.dumps(n["files"]), json.dumps(n["lines"]), json.dumps(n["rows"]), n["problems"],
        json.dumps(n["skipped"]), json.dumps(n["doubts"])[:400]))
    for p in n["problem_list"]:
        out.append("  - problem: %s" % json.dumps(p)[:400])
out.append("- unpriced models reported by usage: %s" % (json.dumps(unpriced) if unpriced else "none"))
out.append("\n### token mismatches (expected → tokaudit)\n")
if not mismatches:
    out.append("none")
for m in mismatches:
    out.append("- seed %s %s (%s/%s): %s; requests written %s, tokaudit calls %s" % (
        m["seed"], m["session"], m["cohort"], m["family"],
        ", ".join("%s %s→%s" % (k, v[0], v[1]) for k, v in m["diff"].items()), m["calls_expected"], m["calls_got"]))
if missing:
    out.append("\n### labelled sessions not in `usage --by session`\n")
    for s, sid in missing:
        out.append("- seed %s %s" % (s, sid))
print("\n".join(out))
json.dump(rows, open(os.path.join(root, "details-%s.json" % tag), "w"), indent=1)
