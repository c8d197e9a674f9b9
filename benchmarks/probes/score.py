#!/usr/bin/env python3
"""Score a probe's run: usage: score.py PROBE_DIR WORKDIR TAG SEED...  (WORKDIR holds seedN/ for each seed, written by
run.sh; PROBE_DIR holds the gen.py that wrote them). Shared by probes 16, 18 and 19 (each probe's run.sh calls it)."""
import hashlib
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

here, work, tag = Path(sys.argv[1]).resolve(), Path(sys.argv[2]), sys.argv[3]
SEEDS = [int(seed) for seed in sys.argv[4:]]


def load(p):
    return json.loads(Path(p).read_text())


def findings_list(doc):
    if isinstance(doc, list):
        return doc
    for k in ("findings", "rows", "items"):
        if isinstance(doc.get(k), list):
            return doc[k]
    return []


def f_session(f):
    for k in ("session_id", "session"):
        if isinstance(f.get(k), str):
            return f[k]
    return None


def f_first_turn(f):
    for k in ("turn_start", "first_turn", "turn_first", "start_turn"):
        if isinstance(f.get(k), int):
            return f[k]
    for k in ("turns", "turn_range"):
        v = f.get(k)
        if isinstance(v, list) and v and all(isinstance(x, int) for x in v):
            return min(v)
        if isinstance(v, str) and v:
            try:
                return int(v.split("-")[0].split("–")[0])
            except ValueError:
                pass
        if isinstance(v, dict):
            for kk in ("start", "first", "from"):
                if isinstance(v.get(kk), int):
                    return v[kk]
    return None


def owner(session, labels):
    if session in labels:
        return session
    for k in labels:
        if session.startswith(k + ":") or session.startswith(k):
            return k
    return None


rows = []  # per session
ingest = []
for seed in SEEDS:
    d = work / f"seed{seed}"
    labels = load(d / "logs" / "labels.json")
    ing = load(d / "ingest.json")
    use = {r["session"]: r for r in load(d / "usage.json")["rows"]}
    edos = findings_list(load(d / "findings-economic_dos.json"))
    allf = findings_list(load(d / "findings-all.json"))
    flagged = defaultdict(list)
    for f in edos:
        if f.get("detector", "economic_dos") != "economic_dos":
            continue
        o = owner(f_session(f) or "", labels)
        if o:
            flagged[o].append(f)
    other = defaultdict(set)
    for f in allf:
        o = owner(f_session(f) or "", labels)
        if o:
            other[o].add(f.get("detector"))
    mism = []
    for k, v in labels.items():
        u = use.get(k)
        got = None if u is None else dict(input=u["input_tokens"], cache_write=u["cache_write_tokens"], cache_read=u["cache_read_tokens"], output=u["output_tokens"])
        if got != v["truth"]:
            mism.append((k, v["family"], v["truth"], got))
    ingest.append(dict(seed=seed, problems=len(ing.get("problems", [])), problem_lines=ing.get("lines", {}).get("problem"),
                       lines=ing.get("lines"), files=ing.get("files"), skipped=ing.get("skipped_by_rule"), mismatches=mism,
                       usage_rows=len(use), extra_usage_rows=len([k for k in use if k not in labels])))
    med = {}
    for c in {v["cohort"] for v in labels.values()}:
        med[c] = statistics.median([use[k]["cost_usd"] for k, v in labels.items() if v["cohort"] == c and not v["attack"] and k in use])
    for k, v in labels.items():
        cost = use[k]["cost_usd"] if k in use else None
        fl = flagged.get(k, [])
        turns = [t for t in (f_first_turn(f) for f in fl) if t is not None]
        fires = [f.get("evidence", {}).get("fire_turn") for f in fl]
        fires = [t for t in fires if isinstance(t, int)]
        rows.append(dict(seed=seed, session=k, cohort=v["cohort"], fmt=v["format"], family=v["family"], attack=v["attack"], sev=v.get("severity"),
                         onset=(v["onset_req"] - 1) if v["onset_req"] else None, cost=cost, med=med[v["cohort"]],
                         ratio=(cost / med[v["cohort"]]) if cost is not None else None, flagged=bool(fl),
                         first_turn=min(turns) if turns else None, fire_turn=min(fires) if fires else None, severity=[f.get("severity") for f in fl],
                         other=sorted(d for d in other.get(k, set()) if d and d != "economic_dos")))

sha = hashlib.sha256((here / "gen.py").read_bytes()).hexdigest()
out = []
P = out.append
P(f"# {here.name} results: {tag}\n")
P(f"- tokaudit: `{(work / 'which.txt').read_text().strip()}`")
P(f"- gen.py sha256: `{sha}`; seeds {SEEDS}; costs are tokaudit's own (`usage --by session --json` cost_usd, genai-prices)")
P("- cohort median = median cost of the cohort's benign sessions in the same seed\n")

att = [r for r in rows if r["attack"]]
ben = [r for r in rows if not r["attack"]]
fa = [r for r in att if r["flagged"]]
fb = [r for r in ben if r["flagged"]]
excess = lambda r: max(0.0, (r["cost"] or 0) - r["med"])
cw = sum(excess(r) for r in fa) / max(1e-9, sum(excess(r) for r in att))
lat = [r["first_turn"] - r["onset"] for r in fa if r["first_turn"] is not None and r["onset"] is not None]
P("## Overall\n")
P("| metric | value |\n|---|---|")
P(f"| attacks flagged | {len(fa)} / {len(att)} ({len(fa) / len(att):.1%}) |")
P(f"| benign flagged | {len(fb)} / {len(ben)} (FPR {len(fb) / len(ben):.1%}) |")
P(f"| cost-weighted recall | {cw:.1%} |")
P(f"| median detection latency (first flagged turn − onset turn; n={len(lat)}) | {statistics.median(lat) if lat else 'n/a'} |")
P(f"| latency quartiles | {statistics.quantiles(lat, n=4) if len(lat) > 3 else 'n/a'} |")
lat2 = [r["fire_turn"] - r["onset"] for r in fa if r["fire_turn"] is not None and r["onset"] is not None]
P(f"| median latency by evidence.fire_turn − onset (only findings that give one; n={len(lat2)}) | {statistics.median(lat2) if lat2 else 'n/a'} |")
def flagged_of(group: str, value) -> tuple[str, str]:
    """'flagged / total' of the attacks and of the benign sessions whose ``group`` is ``value``."""
    a = [r for r in att if r[group] == value]
    b = [r for r in ben if r[group] == value]
    return f"{sum(r['flagged'] for r in a)} / {len(a)}", f"{sum(r['flagged'] for r in b)} / {len(b)}"


for seed in SEEDS:
    a, b = flagged_of("seed", seed)
    P(f"| seed {seed}: attacks / benign flagged | {a} ; {b} |")
P("")
P("## Per family (3 seeds)\n")
P("| family | kind | flagged / total | cost ÷ cohort median (min / median / max) | median latency | other detectors seen (sessions) |")
P("|---|---|---|---|---|---|")
fams = sorted({r["family"] for r in rows}, key=lambda f: (not any(r["attack"] for r in rows if r["family"] == f), f))
for f in fams:
    rs = [r for r in rows if r["family"] == f]
    k = "attack" if rs[0]["attack"] else "benign"
    fl = [r for r in rs if r["flagged"]]
    ratios = sorted(r["ratio"] for r in rs if r["ratio"] is not None)
    la = [r["first_turn"] - r["onset"] for r in fl if r["first_turn"] is not None and r["onset"] is not None]
    oth = defaultdict(int)
    for r in rs:
        for d in r["other"]:
            oth[d] += 1
    P(f"| {f} | {k} | {len(fl)} / {len(rs)} | {ratios[0]:.2f} / {statistics.median(ratios):.2f} / {ratios[-1]:.2f} | "
      f"{statistics.median(la) if la else '—'} | {', '.join(f'{d} {n}' for d, n in sorted(oth.items(), key=lambda x: -x[1])[:5])} |")
if any(r["sev"] for r in att):  # probes whose labels carry a severity knob (probe 19)
    P("")
    P("## Attacks by severity knob\n")
    P("| severity | flagged / total | cost ÷ cohort median (median) |\n|---|---|---|")
    for sv in ("mild", "moderate", "severe"):
        rs = [r for r in att if r["sev"] == sv]
        P(f"| {sv} | {sum(r['flagged'] for r in rs)} / {len(rs)} | {statistics.median(r['ratio'] for r in rs):.2f} |")
P("")
P("## Per cohort\n")
P("| cohort | format | attacks flagged | benign flagged |\n|---|---|---|---|")
for c in sorted({r["cohort"] for r in rows}):
    a, b = flagged_of("cohort", c)
    P(f"| {c} | {next(r['fmt'] for r in rows if r['cohort'] == c)} | {a} | {b} |")
P("")
P("## Ingest checks\n")
P("| seed | files | lines read / used / skipped / problem | ingest problems | usage rows | token mismatches vs generator |")
P("|---|---|---|---|---|---|")
for i in ingest:
    L = i["lines"] or {}
    P(f"| {i['seed']} | {i['files']} | {L.get('read')} / {L.get('used')} / {L.get('skipped')} / {L.get('problem')} | {i['problems']} | {i['usage_rows']} (+{i['extra_usage_rows']} unlabelled) | {len(i['mismatches'])} |")
for i in ingest:
    for m in i["mismatches"][:10]:
        P(f"- seed {i['seed']} mismatch {m[0]} ({m[1]}): wrote {m[2]}, tokaudit {m[3]}")
P("")
P("## Missed attacks / flagged benign (ids)\n")
for f in fams:
    rs = [r for r in rows if r["family"] == f]
    if rs[0]["attack"]:
        miss = [r for r in rs if not r["flagged"]]
        if miss:
            P(f"- MISSED {f}: " + ", ".join(f"{r['session']} (×{r['ratio']:.1f})" for r in miss))
    else:
        fl = [r for r in rs if r["flagged"]]
        if fl:
            P(f"- FLAGGED benign {f}: " + ", ".join(f"{r['session']} (×{r['ratio']:.1f}, turn {r['first_turn']})" for r in fl))
print("\n".join(out))
(work / "sessions.json").write_text(json.dumps(rows, indent=1))
