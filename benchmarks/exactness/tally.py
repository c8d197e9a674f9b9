#!/usr/bin/env python3
"""Tally compare.py's results over seeds: how many (source, day) rows agree, and which scenarios do not.

usage: tally.py WORK/seed1 [WORK/seed2 ...]     (each holding work/result.json)
"""
import json
import os
import sys
from collections import defaultdict

rows = []
for folder in sys.argv[1:]:
    rows += json.load(open(os.path.join(folder, "work", "result.json")))["table"]
n = len(rows)
tokens_cc = sum(r["ta_eq_cc"] for r in rows)
tokens_truth = sum(r["ta_eq_truth"] for r in rows)
cost_1pct = sum(r["cost_rel_diff"] <= 0.01 for r in rows)
print(f"\n{n} (source, day) rows over {len(sys.argv) - 1} seeds")
print(f"tokens (input, cache write, cache read, output) equal to ccusage's: {tokens_cc} / {n}")
print(f"tokens equal to the generator's truth: {tokens_truth} / {n}")
print(f"cost within 1% of ccusage's: {cost_1pct} / {n}")
off = defaultdict(list)
for r in rows:
    if not r["ta_eq_cc"] or r["cost_rel_diff"] > 0.01:
        off[r["scenario"]].append(r)
print("\n| scenario | rows | tokens = ccusage | tokens = truth | cost diff (min–max) | why (the generator's note) |")
print("|---|---:|---:|---:|---:|---|")
for scenario, rs in sorted(off.items(), key=lambda kv: kv[0] or ""):
    diffs = [100 * r["cost_rel_diff"] for r in rs]
    note = rs[0]["documented"] or rs[0]["ambiguous"] or ""
    print(f"| {scenario} | {len(rs)} | {sum(r['ta_eq_cc'] for r in rs)} | {sum(r['ta_eq_truth'] for r in rs)} | "
          f"{min(diffs):.1f}–{max(diffs):.1f}% | {note} |")
