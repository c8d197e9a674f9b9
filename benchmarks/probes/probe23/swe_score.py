#!/usr/bin/env python3
"""usage: swe_score.py WORKDIR SEED...  -- score the SWE-agent cohort of a run.sh run (writes WORKDIR/results-swe.md).

tokaudit never prices SWE-agent sessions (no timestamps in .traj files -> cost_usd null, even with a pricing override),
and the shared score.py takes cohort medians over cost_usd, so the SWE-agent labels live in logs/labels-swe.json and
are scored here the same way score.py scores the rest (economic_dos findings, latency = first flagged turn - onset),
with SWE-agent's own instance_cost (usage's reported_cost_usd) as the cost."""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

work, SEEDS = Path(sys.argv[1]), [int(x) for x in sys.argv[2:]]


def findings_list(doc):
    if isinstance(doc, list):
        return doc
    for k in ("findings", "rows", "items"):
        if isinstance(doc.get(k), list):
            return doc[k]
    return []


def f_session(f):
    return next((f[k] for k in ("session_id", "session") if isinstance(f.get(k), str)), None)


def f_first_turn(f):
    for k in ("turn_start", "first_turn", "turn_first", "start_turn"):
        if isinstance(f.get(k), int):
            return f[k]
    return None


rows = []
for seed in SEEDS:
    d = work / f"seed{seed}"
    labels = json.loads((d / "logs" / "labels-swe.json").read_text())
    use = {r["session"]: r for r in json.loads((d / "usage.json").read_text())["rows"]}
    flagged, other = defaultdict(list), defaultdict(set)
    for f in findings_list(json.loads((d / "findings-economic_dos.json").read_text())):
        if f.get("detector", "economic_dos") == "economic_dos" and f_session(f) in labels:
            flagged[f_session(f)].append(f)
    for f in findings_list(json.loads((d / "findings-all.json").read_text())):
        if f_session(f) in labels and f.get("detector") != "economic_dos":
            other[f_session(f)].add(f.get("detector"))
    cost = {k: use[k]["reported_cost_usd"] for k in labels if k in use}
    med = statistics.median(cost[k] for k, v in labels.items() if not v["attack"] and k in cost)
    for k, v in labels.items():
        fl = flagged.get(k, [])
        turns = [t for t in (f_first_turn(f) for f in fl) if t is not None]
        rows.append(dict(seed=seed, session=k, family=v["family"], attack=v["attack"], sev=v["severity"], cost=cost.get(k), med=med,
                         ratio=cost[k] / med if k in cost else None, flagged=bool(fl), usage_cost=use.get(k, {}).get("cost_usd"),
                         onset=(v["onset_req"] - 1) if v["onset_req"] else None, first=min(turns) if turns else None, other=sorted(other.get(k, ()))))
att, ben = [r for r in rows if r["attack"]], [r for r in rows if not r["attack"]]
out = ["# probe23 SWE-agent cohort (scored apart: tokaudit gives these sessions no cost_usd)\n",
       f"- seeds {SEEDS}; cost = SWE-agent's instance_cost (usage reported_cost_usd); cohort median = median of the SWE-agent benign sessions per seed",
       f"- usage cost_usd null for {sum(r['usage_cost'] is None for r in rows)} / {len(rows)} SWE-agent sessions\n",
       "| metric | value |\n|---|---|",
       f"| attacks flagged | {sum(r['flagged'] for r in att)} / {len(att)} |", f"| benign flagged | {sum(r['flagged'] for r in ben)} / {len(ben)} |"]
ex = lambda r: max(0.0, r["cost"] - r["med"])
out.append(f"| cost-weighted recall | {sum(ex(r) for r in att if r['flagged']) / max(1e-9, sum(ex(r) for r in att)):.1%} |")
lat = [r["first"] - r["onset"] for r in att if r["flagged"] and r["first"] is not None]
out.append(f"| median latency (first flagged turn - onset; n={len(lat)}) | {statistics.median(lat) if lat else 'n/a'} |\n")
out.append("| family | kind | flagged / total | cost ÷ cohort median (min / median / max) | other detectors seen (sessions) |\n|---|---|---|---|---|")
for fam in sorted({r["family"] for r in rows}, key=lambda f: (not any(r["attack"] for r in rows if r["family"] == f), f)):
    rs = [r for r in rows if r["family"] == fam]
    ra = sorted(r["ratio"] for r in rs)
    oth = defaultdict(int)
    for r in rs:
        for x in r["other"]:
            oth[x] += 1
    out.append(f"| {fam} | {'attack' if rs[0]['attack'] else 'benign'} | {sum(r['flagged'] for r in rs)} / {len(rs)} | {ra[0]:.2f} / {statistics.median(ra):.2f} / {ra[-1]:.2f} | "
               + ", ".join(f"{x} {n}" for x, n in sorted(oth.items(), key=lambda y: -y[1])[:5]) + " |")
out.append("\n| severity | flagged / total |\n|---|---|")
for sv in ("mild", "moderate", "severe"):
    rs = [r for r in att if r["sev"] == sv]
    out.append(f"| {sv} | {sum(r['flagged'] for r in rs)} / {len(rs)} |")
fb = [r for r in ben if r["flagged"]]
if fb:
    out.append("\n- FLAGGED benign: " + ", ".join(f"{r['family']} {r['session']} (×{r['ratio']:.1f})" for r in fb))
print("\n".join(out))
(work / "results-swe.md").write_text("\n".join(out) + "\n")
