#!/usr/bin/env python3
"""Check ccusage's `claude daily --json -z UTC` output against generator-stats.json.

    python benchmarks/verify_ccusage.py DATA_DIR/generator-stats.json ccusage-daily.json

Compares token totals, per UTC day, and per day x model (input, output, cache creation,
cache read). The generator's figures are sums over unique requests (message.id+requestId),
so equality means ccusage deduplicated every multi-line request exactly once.
Exit status 0 when everything matches, 1 otherwise. Stdlib only.
"""

from __future__ import annotations

import json
import sys

PAIRS = [
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheCreationTokens", "cache_creation_input_tokens"),
    ("cacheReadTokens", "cache_read_input_tokens"),
]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gen = json.load(open(argv[1]))
    cc = json.load(open(argv[2]))
    bad: list[str] = []

    def cmp(where: str, c: dict, g: dict) -> None:
        for ck, gk in PAIRS:
            if c.get(ck, 0) != g.get(gk, 0):
                bad.append(f"{where} {ck}: ccusage {c.get(ck, 0):,} != generator {g.get(gk, 0):,}")

    cmp("totals", cc["totals"], gen["tokens_unique_requests"])
    gdays = gen["tokens_by_day_utc"]
    cdays = {d["date"]: d for d in cc["daily"]}
    for day in sorted(set(gdays) | set(cdays)):
        if day not in cdays or day not in gdays:
            bad.append(f"day {day}: only in {'generator' if day in gdays else 'ccusage'}")
            continue
        cmp(f"day {day}", cdays[day], gdays[day])
        # ccusage reports requests with usage.speed="fast" as "<model>-fast": fold them back
        cm: dict[str, dict] = {}
        for m in cdays[day].get("modelBreakdowns", []):
            name = m["modelName"].removesuffix("-fast")
            acc = cm.setdefault(name, dict.fromkeys((ck for ck, _ in PAIRS), 0))
            for ck, _ in PAIRS:
                acc[ck] += m.get(ck, 0)
        gm = gdays[day]["models"]
        for model in sorted(set(cm) | set(gm)):
            if model not in cm or model not in gm:
                bad.append(f"day {day} model {model}: only in {'generator' if model in gm else 'ccusage'}")
                continue
            cmp(f"day {day} {model}", cm[model], gm[model])
    t = gen["tokens_unique_requests"]
    tw = gen["totals_written"]
    print(
        f"generator: {tw['files']:,} files, {tw['lines']:,} lines, {tw['assistant_lines']:,} assistant lines, "
        f"{tw['unique_requests']:,} unique requests; " + ", ".join(f"{gk} {t[gk]:,}" for _, gk in PAIRS)
    )
    print(
        "ccusage:   " + ", ".join(f"{ck} {cc['totals'][ck]:,}" for ck, _ in PAIRS) + f", totalCost ${cc['totals'].get('totalCost', 0):,.2f}"
    )
    if bad:
        print(f"MISMATCH ({len(bad)}):")
        for b in bad[:40]:
            print("  " + b)
        return 1
    print(f"MATCH: totals, {len(gdays)} days and every day x model breakdown are identical")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
