#!/usr/bin/env python3
"""usage: costcheck.py LABELS.json USAGE.json [INGEST.json] -- pre-audit check from `tokaudit usage --by session --json`
only: token mismatches vs the generator, null costs, cost / cohort benign median per family, and each attack's cost /
the median cost of its honest twin family in the same cohort (mild >= 2x, severe >= 10x intended)."""
import collections
import json
import statistics
import sys

L = json.load(open(sys.argv[1]))
U = {r["session"]: r for r in json.load(open(sys.argv[2]))["rows"]}
if len(sys.argv) > 3:
    I = json.load(open(sys.argv[3]))
    print("ingest lines", I.get("lines"), "problems", len(I.get("problems", [])), "files", I.get("files"))
mism = [k for k, v in L.items() if k not in U or dict(input=U[k]["input_tokens"], cache_write=U[k]["cache_write_tokens"],
                                                       cache_read=U[k]["cache_read_tokens"], output=U[k]["output_tokens"]) != v["truth"]]
nulls = [k for k in L if k in U and U[k]["cost_usd"] is None]
print(f"sessions {len(L)}, usage rows {len(U)} (+{len([k for k in U if k not in L])} unlabelled), token mismatches {len(mism)} {mism[:3]}, null costs {len(nulls)}")
med = {c: statistics.median(U[k]["cost_usd"] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in {v["cohort"] for v in L.values()}}
fmed = collections.defaultdict(list)
for k, v in L.items():
    if not v["attack"]:
        fmed[(v["family"], v["cohort"])].append(U[k]["cost_usd"])
fmed = {k: statistics.median(x) for k, x in fmed.items()}
print("cohort benign medians", {c: round(m, 3) for c, m in med.items()})
fam = collections.defaultdict(list)
bad = []
for k, v in L.items():
    tw = fmed.get((v.get("twin"), v["cohort"])) if v["attack"] else None
    r = U[k]["cost_usd"] / tw if tw else None
    fam[v["family"]].append((U[k]["cost_usd"] / med[v["cohort"]], v["severity"], v["cohort"], r))
    if v["attack"] and ((v["severity"] == "mild" and r < 2) or (v["severity"] == "severe" and r < 10)):
        bad.append((v["family"], v["severity"], v["cohort"], round(r, 2)))
for f, xs in sorted(fam.items(), key=lambda x: (not L[next(k for k in L if L[k]["family"] == x[0])]["attack"], x[0])):
    xs.sort(key=lambda x: (x[1] or "", x[0]))
    print(f"{f:18s} n={len(xs):2d} " + " ".join(f"{r:.2f}{(s or '')[:2]}{c[0]}" + (f"(tw{t:.1f})" if t else "") for r, s, c, t in xs))
print("attacks below the intended multiple of their twin:", bad if bad else "none")
