#!/usr/bin/env python3
"""usage: costcheck.py LABELS.json USAGE.json -- pre-audit calibration: cost / cohort benign median per family, plus
attack cost / median cost of its honest twin family in the same cohort, and truth-vs-usage token mismatches."""
import collections
import json
import statistics
import sys

L = json.load(open(sys.argv[1]))
U = {r["session"]: r for r in json.load(open(sys.argv[2]))["rows"]}
mism = [k for k, v in L.items() if k not in U or dict(input=U[k]["input_tokens"], cache_write=U[k]["cache_write_tokens"],
                                                       cache_read=U[k]["cache_read_tokens"], output=U[k]["output_tokens"]) != v["truth"]]
print(f"sessions {len(L)}, usage rows {len(U)}, token mismatches {len(mism)}", mism[:5])
med = {c: statistics.median(U[k]["cost_usd"] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in {v["cohort"] for v in L.values()}}
fmed = collections.defaultdict(list)
for k, v in L.items():
    if not v["attack"]:
        fmed[(v["family"], v["cohort"])].append(U[k]["cost_usd"])
fmed = {k: statistics.median(x) for k, x in fmed.items()}
print("cohort medians", {c: round(m, 3) for c, m in med.items()}, "benign per cohort",
      dict(collections.Counter(v["cohort"] for v in L.values() if not v["attack"])))
fam = collections.defaultdict(list)
for k, v in L.items():
    tw = fmed.get((v.get("twin"), v["cohort"])) if v["attack"] else None
    fam[v["family"]].append((U[k]["cost_usd"] / med[v["cohort"]], v["severity"], v["cohort"], (U[k]["cost_usd"] / tw) if tw else None))
for f, xs in sorted(fam.items(), key=lambda x: (not L[next(k for k in L if L[k]["family"] == x[0])]["attack"], x[0])):
    xs.sort()
    print(f"{f:20s} n={len(xs):2d} " + " ".join(f"{r:.2f}{(s or '')[:2]}{c[0]}" + (f"(tw{t:.1f})" if t else "") for r, s, c, t in xs))
