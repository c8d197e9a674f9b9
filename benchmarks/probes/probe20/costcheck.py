"""pre-audit calibration: cost ratios from `usage --by session --json` (no audit output). usage: costcheck.py LOGDIR USAGE.json"""
import json, statistics, sys
from collections import defaultdict
L = json.load(open(sys.argv[1] + "/labels.json")); use = {r["session"]: r for r in json.load(open(sys.argv[2]))["rows"]}
TWIN = dict(slot_shuttle="meeting_booking", section_tour="policy_lookup", eta_shell_poll="build_polling", n_plus_one="real_n_plus_one",
            echo_snowball="doc_revision", polyglot_sponge="research_reading", rota_puzzle="hard_bug_reasoning", late_fanout="long_coding",
            deprecation_hops="server_upgrade_once", narrative_inflation="expense_batch")
med = {c: statistics.median(use[k]["cost_usd"] for k, v in L.items() if v["cohort"] == c and not v["attack"]) for c in ("opus", "codex")}
print("cohort medians", med)
fam = defaultdict(list)
for k, v in L.items():
    fam[(v["family"], v["cohort"])].append((v.get("severity"), use[k]["cost_usd"], v["requests"], v.get("compactions"), v.get("onset_req")))
for f in sorted({f for f, _ in fam}, key=lambda f: (f not in TWIN, f)):
    for c in ("opus", "codex"):
        rs = fam.get((f, c), [])
        if not rs: continue
        if f in TWIN:
            tw = statistics.median(x[1] for x in fam[(TWIN[f], c)])
            print(f"{f:20s} {c:6s} twin={tw:6.2f} " + "  ".join(f"{s[:3]}:{x/tw:5.1f}x/{x/med[c]:5.1f}m r{n} c{cp} on{o}" for s, x, n, cp, o in sorted(rs)))
        else:
            print(f"{f:20s} {c:6s} " + " ".join(f"{x/med[c]:.1f}" for s, x, n, cp, o in sorted(rs, key=lambda z: z[1])) + f"  req {min(x[2] for x in rs)}-{max(x[2] for x in rs)} comp {max(x[3] for x in rs)}")
