#!/usr/bin/env python3
"""usage: costcheck.py LABELS.json USAGE.json -- pre-audit calibration: cost per family / cohort median (usage only)."""
import json, statistics, sys, collections
L = json.load(open(sys.argv[1])); U = {r["session"]: r for r in json.load(open(sys.argv[2]))["rows"]}
med = {c: statistics.median(U[k]["cost_usd"] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in {v["cohort"] for v in L.values()}}
print("cohort medians", {c: round(m, 3) for c, m in med.items()})
fam = collections.defaultdict(list)
for k, v in L.items():
    fam[v["family"]].append((U[k]["cost_usd"] / med[v["cohort"]], v["severity"], v["cohort"], v["requests"], k))
for f, xs in sorted(fam.items(), key=lambda x: (not L[x[1][0][4]]["attack"], x[0])):
    xs.sort()
    print(f"{f:20s} n={len(xs):2d} " + " ".join(f"{r:.2f}{(s or '')[:2]}{c[0]}" for r, s, c, n, k in xs))
