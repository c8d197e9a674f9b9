#!/usr/bin/env python3
"""Summarise tokaudit's findings (all detectors) per family: usage: explain.py WORKDIR [family ...]"""
import json, re, sys
from collections import Counter, defaultdict
from pathlib import Path
work = Path(sys.argv[1]); want = set(sys.argv[2:])
rows = json.loads((work / "sessions.json").read_text())
allf = defaultdict(list)
for seed in (181, 182, 183):
    for f in json.loads((work / f"seed{seed}" / "findings-all.json").read_text()):
        allf[f["session_id"]].append(f)
fams = defaultdict(list)
for r in rows:
    fams[r["family"]].append(r)
for fam, rs in sorted(fams.items()):
    if want and fam not in want:
        continue
    att = rs[0]["attack"]
    sel = [r for r in rs if (not r["flagged"]) == att]  # missed attacks / flagged benign
    if not sel:
        continue
    print(f"== {fam} ({'attack, missed' if att else 'benign, flagged'} {len(sel)}/{len(rs)})")
    c = Counter(); ratios = []
    for r in sel:
        for f in allf[r["session"]]:
            c[(f["detector"], f["severity"])] += 1
        m = [re.search(r"session cost ([\d.]+)× its cohort", f["explanation"] or "") for f in allf[r["session"]]]
        m = [float(x.group(1)) for x in m if x]
        ratios.append((round(r["ratio"], 1), m[0] if m else None))
    print("  detectors (detector, severity): count", dict(c))
    print("  (our cost ratio, tokaudit's cohort ratio):", ratios)
    ex = {}
    for r in sel:
        for f in allf[r["session"]]:
            ex.setdefault(f["detector"], f)
    for d, f in ex.items():
        print(f"  e.g. {d}: {f['metric']}={str(f['value'])[:8]} thr[{f['threshold']}] tool={f.get('tool_key')} :: {f['explanation'][:420]}")
