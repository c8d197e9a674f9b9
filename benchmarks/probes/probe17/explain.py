"""Print every finding of some sessions of a probe run: ``python explain.py work/TAG SEED:SESSION_ID ...``."""

import json
import sys

root = sys.argv[1]
for arg in sys.argv[2:]:
    seed, session_id = arg.split(":", 1)
    with open(f"{root}/{seed}/findings-all.json") as f:
        findings = json.load(f)
    print("==", seed, session_id)
    for finding in findings:
        if finding["session_id"] == session_id:
            print(f"  [{finding['detector']}/{finding['severity']}] {finding['explanation'][:600]}")
