#!/usr/bin/env python3
"""usage: costcheck.py LABELS.json USAGE.json [INGEST.json]

Pre-audit check reading only `tokaudit usage --by session --json` (and the ingest summary): token totals per session vs
the generator's truth, unpriced sessions, and each attack's cost / the median cost of its honest twin family in the
same cohort and seed (intended: mild >= 2x, severe >= 10x)."""
import collections
import json
import statistics
import sys

L = json.load(open(sys.argv[1]))
U = {r["session"]: r for r in json.load(open(sys.argv[2]))["rows"]}
if len(sys.argv) > 3:
    I = json.load(open(sys.argv[3]))
    print("ingest lines", I.get("lines"), "problems", len(I.get("problems", [])), "format_doubts", len(I.get("format_doubts", [])))
got = lambda u: dict(input=u["input_tokens"], cache_write=u["cache_write_tokens"], cache_read=u["cache_read_tokens"], output=u["output_tokens"])
mism = [k for k, v in L.items() if k not in U or got(U[k]) != v["truth"]]
nulls = [k for k in L if k in U and U[k]["cost_usd"] is None]
print(f"sessions {len(L)}, usage rows {len(U)} (+{len([k for k in U if k not in L])} unlabelled), token mismatches {len(mism)} {mism[:3]}, "
      f"null costs {len(nulls)}")
for k in mism[:5]:
    print("  ", k, L[k]["family"], L[k]["truth"], got(U[k]) if k in U else None)
med = {c: statistics.median(U[k]["cost_usd"] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in sorted({v["cohort"] for v in L.values()})}
fm = collections.defaultdict(list)
for k, v in L.items():
    if not v["attack"]:
        fm[(v["family"], v["cohort"])].append(U[k]["cost_usd"])
fmed = {k: statistics.median(x) for k, x in fm.items()}
print("cohort benign medians $", {c: round(m, 3) for c, m in med.items()})
bad = []
print(f"{'family':24s} {'cohort':7s} {'sev':9s} {'cost$':>8s} {'twin$':>7s} {'x twin':>7s} {'x cohort':>8s} req")
for k, v in sorted(L.items(), key=lambda kv: (kv[1]["family"], kv[1]["cohort"], ["mild", "moderate", "severe"].index(kv[1]["severity"]) if kv[1]["severity"] else 0)):
    if not v["attack"]:
        continue
    c = U[k]["cost_usd"]
    tw = fmed[(v["twin"], v["cohort"])]
    x = c / tw
    ok = (v["severity"] != "mild" or x >= 2) and (v["severity"] != "severe" or x >= 10) and (v["severity"] != "moderate" or x >= 2)
    if not ok:
        bad.append(k)
    print(f"{v['family']:24s} {v['cohort']:7s} {v['severity']:9s} {c:8.3f} {tw:7.3f} {x:7.2f} {c / med[v['cohort']]:8.2f} {v['requests']} {'' if ok else '  <-- BELOW TARGET'}")
print("benign family medians $:")
for (f, c), m in sorted(fmed.items()):
    print(f"  {f:22s} {c:7s} {m:.3f}  (max {max(fm[(f, c)]):.3f})")
print("RESULT:", "all attacks meet the severity targets" if not bad else f"{len(bad)} attacks below target")
