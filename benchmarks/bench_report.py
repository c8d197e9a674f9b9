#!/usr/bin/env python3
"""Render the Markdown report of benchmarks/run_ingest_bench.sh from its work dir.

    python benchmarks/bench_report.py BENCH_TMP > report.md

Reads BENCH_TMP/{meta.env, free.txt, steps.tsv, hf/<id>-r<round>.json, rss/<id>-<n>.txt,
out/verify-ccusage.txt}. Pools the hyperfine runs of all rounds per command. Stdlib only.
"""

from __future__ import annotations

import glob
import json
import os
import re
import statistics
import sys

# acceptance targets (see the brief / performance reference)
TARGET_INGEST_RATIO = 1.0  # cold ingest wall <= 1.0x ccusage
TARGET_USAGE_SPEEDUP = 10.0  # warm usage >= 10x faster than ccusage daily
TARGET_REINGEST_S = 0.3  # re-ingest, no change <= 0.3 s
TARGET_RSS_MB = 500.0  # peak RSS <= 500 MB (tokaudit)


def load_runs(d: str, sid: str) -> dict | None:
    files = sorted(glob.glob(os.path.join(d, "hf", f"{sid}-r*.json")), key=lambda p: int(re.search(r"-r(\d+)\.json$", p).group(1)))
    if not files:
        return None
    times, users, syss, rounds = [], [], [], []
    for f in files:
        r = json.load(open(f))["results"][0]
        times += r["times"]
        users.append((r["user"], len(r["times"])))
        syss.append((r["system"], len(r["times"])))
        rounds.append(r["mean"])
    n = len(times)
    return {
        "n": n,
        "mean": statistics.fmean(times),
        "sd": statistics.stdev(times) if n > 1 else 0.0,
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "cpu": sum(u * k for u, k in users) / n + sum(s * k for s, k in syss) / n,
        "round_means": rounds,
    }


def load_rss(d: str, sid: str) -> dict | None:
    """Max over runs of GNU time's max RSS and of the sampled process-tree PSS/RSS (MB = 10^6 B)."""
    ru, pss, trss, procs, n = [], [], [], [], 0
    for f in glob.glob(os.path.join(d, "rss", f"{sid}-*.txt")):
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(f).read())
        if m:
            ru.append(int(m.group(1)))
            n += 1
    for f in glob.glob(os.path.join(d, "rss", f"{sid}-*.tree.json")):
        t = json.load(open(f))
        pss.append(t["tree_pss_peak_kb"])
        trss.append(t["tree_rss_peak_kb"])
        procs.append(t["max_procs"])
    if not ru and not pss:
        return None
    mb = lambda v: max(v) * 1024 / 1e6 if v else None  # noqa: E731
    return {"ru": mb(ru), "pss": mb(pss), "tree_rss": mb(trss), "procs": max(procs) if procs else None, "n": n}


def fmt_s(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def main(d: str) -> int:
    meta = {}
    for line in open(os.path.join(d, "meta.env")):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            meta[k] = v
    steps = [line.rstrip("\n").split("\t") for line in open(os.path.join(d, "steps.tsv")) if line.strip()]
    res = {s[0]: load_runs(d, s[0]) for s in steps}
    rss = {s[0]: load_rss(d, s[0]) for s in steps}
    cc = res.get("ccusage")
    out = []
    w = out.append
    size = int(meta.get("data_bytes", "0") or 0)
    w("# Ingest benchmark: tokaudit vs ccusage vs raw read")
    w("")
    w(f"- Date (UTC): {meta.get('date_utc')}  ")
    w(
        f"- Machine: {meta.get('host')}, nproc {meta.get('nproc')}, CPU {meta.get('cpu') or '?'}, {meta.get('kernel')}; "
        f"load average at start {meta.get('load_start')}, at end {meta.get('load_end', '?')}  "
    )
    w(f"- Data: `{meta.get('data')}`: {int(meta.get('data_files', 0)):,} files, {size:,} bytes ({size / 2**20:.1f} MiB)  ")
    gs = os.path.join(meta.get("data", ""), "generator-stats.json")
    if os.path.exists(gs):
        g = json.load(open(gs))
        t = g["totals_written"]
        w(
            f"- Corpus (generator-stats.json): {t['lines']:,} lines, {t['assistant_lines']:,} assistant lines, "
            f"{t['unique_requests']:,} unique requests, seed {g['args'].get('seed')}; line bytes median "
            f"{g['line_bytes']['median']:,} / p99 {g['line_bytes']['p99']:,}; file bytes median "
            f"{g['file_bytes']['median']:,} / p90 {g['file_bytes']['p90']:,} / p99 {g['file_bytes']['p99']:,} / max "
            f"{g['file_bytes']['max']:,}  "
        )
    w(
        f"- Versions: {meta.get('ccusage')}; tokaudit: {meta.get('tokaudit')}; {meta.get('hyperfine')}; "
        f"{meta.get('python')}; {meta.get('gnu_time')}  "
    )
    w(
        f"- Method: hyperfine, warm page cache; {meta.get('rounds')} rounds of {meta.get('runs')} timed runs "
        f"({meta.get('fast_runs')} for usage / re-ingest), commands interleaved round by round (cat, ccusage, ingest, "
        f"usage, re-ingest), all runs pooled. Peak RSS: GNU `time -v` max RSS (largest single process) and the "
        f"peak PSS summed over the process tree (sampled every 10 ms by peak_mem.py); max over "
        f"{meta.get('rss_runs')} runs each; the RSS target uses the larger of the two. MB = 10^6 bytes."
        + (" Python bytecode caching on, as in an installed tokaudit (PYTHONDONTWRITEBYTECODE, set in the calling shell, was unset)."
           if meta.get("pythondontwritebytecode_unset", "was not set") != "was not set" else "")
    )
    w("")
    w(
        "| step | runs | mean ± sd | median | min | CPU (user+sys) | peak RSS (time -v) | peak tree PSS | vs ccusage (mean) | target | result |"
    )
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    verdicts = []
    for sid, label, _cmd, status in steps:
        r = res.get(sid)
        m = rss.get(sid)
        rss_s = f"{m['ru']:.0f} MB" if m and m["ru"] is not None else "–"
        pss_s = f"{m['pss']:.0f} MB ({m['procs']} proc)" if m and m["pss"] is not None else "–"
        peak = max(x for x in (m["ru"], m["pss"]) if x is not None) if m and (m["ru"] or m["pss"]) else None
        if status.startswith("skipped"):
            w(f"| {label} | – | {status} | | | | | | | | |")
            continue
        if r is None:
            w(f"| {label} | – | FAILED (no results) | | | | {rss_s} | {pss_s} | | | FAIL |")
            verdicts.append(False)
            continue
        ratio = ""
        target = ""
        ok: bool | None = None
        if cc and sid != "ccusage":
            q = r["mean"] / cc["mean"]
            ratio = (f"{q:.2f}×" if q >= 0.1 else f"{q:.3f}×") + (f" ({cc['mean'] / r['mean']:.1f}× faster)" if q < 1 else "")
        if sid == "ccusage":
            ratio = "1.00×"
        if sid == "ingest_cold" and cc:
            target = f"≤ {TARGET_INGEST_RATIO:.1f}× ccusage; RSS ≤ {TARGET_RSS_MB:.0f} MB"
            ok = r["mean"] / cc["mean"] <= TARGET_INGEST_RATIO and (peak is None or peak <= TARGET_RSS_MB)
        elif sid == "usage_warm" and cc:
            target = f"≥ {TARGET_USAGE_SPEEDUP:.0f}× faster than ccusage"
            ok = cc["mean"] / r["mean"] >= TARGET_USAGE_SPEEDUP and (peak is None or peak <= TARGET_RSS_MB)
        elif sid == "reingest_nochange":
            target = f"≤ {TARGET_REINGEST_S} s"
            ok = r["mean"] <= TARGET_REINGEST_S and (peak is None or peak <= TARGET_RSS_MB)
        if ok is not None:
            verdicts.append(ok)
        w(
            f"| {label} | {r['n']} | {fmt_s(r['mean'])} ± {fmt_s(r['sd'])} | {fmt_s(r['median'])} | {fmt_s(r['min'])} "
            f"| {fmt_s(r['cpu'])} | {rss_s} | {pss_s} | {ratio} | {target} | {'' if ok is None else 'PASS' if ok else 'FAIL'} |"
        )
    w("")
    if cc and size:
        w(
            f"Throughput: ccusage {size / cc['mean'] / 1e6:,.0f} MB/s"
            + (f"; cat {size / res['cat']['mean'] / 1e6:,.0f} MB/s" if res.get("cat") else "")
            + (f"; tokaudit cold ingest {size / res['ingest_cold']['mean'] / 1e6:,.0f} MB/s" if res.get("ingest_cold") else "")
            + "."
        )
        w("")
    # per-round paired ratios (robust against drifting machine load)
    if cc and len(cc["round_means"]) > 1:
        w(
            "Per-round means (s): "
            + "; ".join(f"{sid} " + ", ".join(f"{x:.3f}" for x in res[sid]["round_means"]) for sid, *_ in steps if res.get(sid))
        )
        if res.get("ingest_cold"):
            pr = [a / b for a, b in zip(res["ingest_cold"]["round_means"], cc["round_means"])]
            w(f"  \nPaired per-round ratio ingest_cold / ccusage: {', '.join(f'{x:.2f}' for x in pr)} (median {statistics.median(pr):.2f})")
        if res.get("usage_warm"):
            pr = [b / a for a, b in zip(res["usage_warm"]["round_means"], cc["round_means"])]
            w(
                f"  \nPaired per-round speedup ccusage / usage_warm: {', '.join(f'{x:.1f}' for x in pr)} "
                f"(median {statistics.median(pr):.1f})"
            )
        w("")
    if verdicts:
        w(f"**Targets: {'all PASS' if all(verdicts) else 'some FAIL'}** ({sum(verdicts)}/{len(verdicts)} rows pass).")
        w("")
    vf = os.path.join(d, "out", "verify-ccusage.txt")
    if os.path.exists(vf):
        w("ccusage totals vs the generator's (unique requests, keep-max by message.id+requestId):")
        w("```")
        w(open(vf).read().rstrip())
        w("```")
        w("")
    w("Commands (each run by hyperfine through `sh -c`):")
    w("```")
    for sid, label, cmd, status in steps:
        w(f"# {sid}: {label}" + (f"  [{status}]" if status != "ok" else ""))
        w(cmd)
    w("```")
    w("")
    w("Machine memory (`free -g`):")
    w("```")
    w(open(os.path.join(d, "free.txt")).read().rstrip())
    w("```")
    w("")
    failed = os.path.join(d, "failed.txt")
    if os.path.exists(failed):
        w("Failures: " + ", ".join(sorted(set(open(failed).read().split()))) + f" (see {d}/hyperfine.log)")
        w("")
    w(f"Raw hyperfine JSON, GNU time output and command outputs: `{d}`.")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
