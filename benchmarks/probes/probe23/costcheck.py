#!/usr/bin/env python3
"""usage: costcheck.py LOGDIR USAGE.json [INGEST.json] -- pre-audit check from `tokaudit usage --by session --json` only:
token mismatches vs the generator's truth (labels.json + labels-swe.json), unpriced models, cost / cohort benign median
per family, and each attack's cost / the median cost of its honest twin family in the same cohort.
Cost = usage's cost_usd; for SWE-agent sessions (never priced by tokaudit: no timestamps) SWE-agent's own
instance_cost (usage's reported_cost_usd)."""
import collections
import json
import os
import statistics
import sys

L = {}
for f in ("labels.json", "labels-swe.json"):
    L.update(json.load(open(os.path.join(sys.argv[1], f))))
doc = json.load(open(sys.argv[2]))
U = {r["session"]: r for r in doc["rows"]}
if len(sys.argv) > 3:
    ing = json.load(open(sys.argv[3]))
    print("ingest: files", ing["files"], "lines", ing["lines"], "problems", len(ing.get("problems", [])), "skipped", ing.get("skipped_by_rule"),
          "format_doubts", ing.get("format_doubts"))
mism = [k for k, v in L.items() if k not in U or dict(input=U[k]["input_tokens"], cache_write=U[k]["cache_write_tokens"],
                                                       cache_read=U[k]["cache_read_tokens"], output=U[k]["output_tokens"]) != v["truth"]]
print(f"sessions {len(L)}, usage rows {len(U)} (+{len(set(U) - set(L))} unlabelled), token mismatches {len(mism)}", mism[:5])
print("unpriced models:", doc.get("unpriced_models"))
bad = [k for k, v in L.items() if v["cohort"] != "swe" and U[k]["cost_usd"] is None]
print("non-SWE sessions without cost_usd:", len(bad), "| SWE sessions without cost_usd:", sum(1 for k, v in L.items() if v["cohort"] == "swe" and U[k]["cost_usd"] is None))
cost = {k: (U[k]["cost_usd"] if U[k]["cost_usd"] is not None else U[k]["reported_cost_usd"]) for k in L}
med = {c: statistics.median(cost[k] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in {v["cohort"] for v in L.values()}}
fmed = collections.defaultdict(list)
for k, v in L.items():
    if not v["attack"]:
        fmed[(v["family"], v["cohort"])].append(cost[k])
fmed = {k: statistics.median(x) for k, x in fmed.items()}
print("cohort benign medians", {c: round(m, 3) for c, m in sorted(med.items())}, "benign per cohort",
      dict(sorted(collections.Counter(v["cohort"] for v in L.values() if not v["attack"]).items())))
fam = collections.defaultdict(list)
below = []
for k, v in L.items():
    tw = fmed.get((v.get("twin"), v["cohort"])) if v["attack"] else None
    if v["attack"] and (tw is None or cost[k] <= tw):
        below.append((k, v["family"], v["cohort"], v["severity"], cost[k], tw))
    fam[v["family"]].append((cost[k] / med[v["cohort"]], v["severity"], v["cohort"], (cost[k] / tw) if tw else None))
print("ratios: cost/cohort-median, severity (mi/mo/se), cohort (o=oh, w=swe, t=otel), (tw = cost / twin-family median, same cohort)")
for f, xs in sorted(fam.items(), key=lambda x: (not L[next(k for k in L if L[k]["family"] == x[0])]["attack"], x[0])):
    xs.sort()
    print(f"{f:17s} n={len(xs):2d} " + " ".join(f"{r:.2f}{(s or '')[:2]}{'o' if c == 'oh' else c[1]}" + (f"(tw{t:.1f})" if t else "") for r, s, c, t in xs))
print(f"attacks NOT above their twin's median: {len(below)}", below[:10])
