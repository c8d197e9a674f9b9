"""An honest evaluation of tokaudit's detectors on simulated agent logs (not a test; writes a markdown report).

1. The simulator (``tokaudit.simulate``) writes two corpora in real log formats
   (Claude Code JSONL and MCP transcripts): a **reference** corpus of benign
   sessions only, including hard negatives (polling, pagination, batch edits,
   retries, long coding sessions, subagents), and a **test** corpus with other
   seeds: benign sessions plus attacks of every family, template family and
   stealth level (level 4 uses no directive wording at all).
2. Each corpus is ingested into its own store with ``tokaudit ingest`` and
   audited with ``run_audit`` — the same code path users run.
3. Calibration uses the **reference benign sessions only**: every chain
   detector's threshold is set so it fires on at most 0.25 % of them
   (``analyze.calibration``), and the combined verdict's score (the excess
   tokens it suspects: what the flagged chain was billed after its first call)
   gets the cut-off that flags at most 1 % (and 0.1 %) of them. No attack is seen before testing, so every attack family
   and template family is held out.
4. On the test corpus it reports, per detector (at its defaults) and for the
   combined verdict (at each calibrated cut-off): session FPR on benign
   sessions, recall on attack sessions (per family and stealth level),
   cost-weighted recall (the share of the attacks' excess tokens inside flagged
   sessions) and latency (turns from the attack's onset to the turn the
   evidence was complete). Exact-match loop guards shipped in agent frameworks
   (the same tool with identical arguments K times in a row: K = 3 OpenCode,
   4 OpenHands, 5 Gemini CLI) are scored on the same sessions for comparison.

Usage: python benchmarks/eval_detectors.py --work DIR [--ref-sessions 1500] [--test-sessions 1500] --out benchmarks/results-detectors.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl

from tokaudit.analyze.audit import run_audit
from tokaudit.analyze.calibration import calibrate_thresholds
from tokaudit.analyze.frames import load_frames
from tokaudit.config import Config
from tokaudit.ingest.runner import ingest_paths
from tokaudit.simulate import simulate
from tokaudit.simulate.__main__ import parse_shares
from tokaudit.store import open_store

CHAIN = ("near_duplicates", "continuation_loop", "argument_inflation", "payload_withholding", "cycles")
GUARDS = {"exact-repeat x3 (OpenCode)": 3, "exact-repeat x4 (OpenHands)": 4, "exact-repeat x5 (Gemini CLI)": 5}


def build(work: Path, name: str, sessions: int, seed: int, attack_share: float, agent_formats: dict[str, float] | None = None,
          mcp_transcripts: bool = True) -> tuple[Path, list[dict[str, Any]]]:  # fmt: skip
    """Simulate a corpus (once) and ingest it into its own store (without the MCP transcripts: the agent's logs alone)."""
    corpus = work / name
    if not (corpus / "labels.json").exists():
        summary = simulate(corpus, sessions, seed, attack_share=attack_share, agent_formats=agent_formats)
        print(f"[eval] {name}: {summary.sessions} sessions ({summary.attacks} attacks) in {summary.seconds:.0f} s", flush=True)
    db = work / f"{name}.duckdb"
    if not db.exists():
        with open_store(str(db)) as store:
            folders = ("projects", "codex", "otel", "mcp") if mcp_transcripts else ("projects", "codex", "otel")
            s = ingest_paths(store, [corpus / f for f in folders if (corpus / f).exists()])
            print(f"[eval] {name}: ingested {s.lines_read:,} lines, {s.lines_problem} problems", flush=True)
    return db, json.loads((corpus / "labels.json").read_text())["sessions"]


def owner_map(labels: list[dict[str, Any]]) -> dict[str, str]:
    """Every stored session id (subagents, MCP transcript connections) -> the main session it belongs to."""
    owner = {}
    for lb in labels:
        owner[lb["session_id"]] = lb["session_id"]
        for sub in lb.get("subagents", []):
            owner[sub["session_id"]] = lb["session_id"]
        for mcp in lb.get("mcp_sessions", []):
            owner[mcp["session_id"]] = lb["session_id"]
    return owner


def session_scores(db: Path, labels: list[dict[str, Any]], config: Config) -> tuple[dict[str, dict[str, Any]], float]:
    """Per main session: which detectors fired (with their first fire turn), the combined score, the guard hits."""
    owner = owner_map(labels)
    with open_store(str(db)) as store:
        started = time.perf_counter()
        result = run_audit(store, config=config, save=False)
        seconds = time.perf_counter() - started
        tools = load_frames(store).tools.select("session_id", "call_idx", "tool_key", "args_hash", "turn")
    out: dict[str, dict[str, Any]] = {lb["session_id"]: {"fired": {}, "score": 0.0, "guards": {}} for lb in labels}
    for f in result.findings:
        main = owner.get(f.session_id)
        if main is None:
            continue
        # Latency is counted in the main session's turns; findings on its subagents or MCP connections flag it without one.
        turn = f.evidence.get("fire_turn", f.first_turn) if f.session_id == main else None
        s = out[main]
        prev = s["fired"].get(f.detector)
        s["fired"][f.detector] = turn if prev is None or (turn is not None and turn < prev) else prev
        if f.detector == "economic_dos":
            # The verdict's score is the excess it suspects (tokens billed by the flagged chain after its first call).
            s["score"] = max(s["score"], float(f.excess_tokens or 0) + 1.0)
            s["verdict_turn"] = turn
    # Exact-match guards: K consecutive calls of one tool with identical arguments.
    tools = tools.sort("session_id", "call_idx").with_columns(
        ((pl.col("session_id") != pl.col("session_id").shift(1)) | (pl.col("tool_key") != pl.col("tool_key").shift(1))
         | (pl.col("args_hash") != pl.col("args_hash").shift(1))).fill_null(True).cum_sum().alias("_run")
    )
    streaks = tools.group_by("session_id", "_run").agg(pl.len().alias("n"), pl.col("turn").sort().alias("turns"))
    for row in streaks.iter_rows(named=True):
        main = owner.get(row["session_id"])
        if main is None:
            continue
        for name, k in GUARDS.items():
            if row["n"] >= k:
                turn = row["turns"][k - 1]
                prev = out[main]["guards"].get(name)
                out[main]["guards"][name] = turn if prev is None else min(prev, turn)
    return out, seconds


def samples_section(samples: Path, work: Path, config: Config) -> list[str]:
    """Every finding the detectors raise on real logs (believed benign), with the calibrated thresholds."""
    db = work / "samples.duckdb"
    db.unlink(missing_ok=True)
    with open_store(str(db)) as store:
        ingest_paths(store, [samples])
        result = run_audit(store, config=config, save=False)
        sessions = store.duck.execute("SELECT count(DISTINCT session_id) FROM sessions").fetchone()[0]
    lines = ["", f"## Real logs: `{samples}` ({sessions} sessions, believed benign)", "",
             "| detector | severity | session | finding |", "|---|---|---|---|"]
    for f in sorted(result.findings, key=lambda f: (f.detector, f.session_id)):
        text = f.explanation.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {f.detector} | {f.severity} | `{f.session_id[-48:]}` | {text[:260]}{'…' if len(text) > 260 else ''} |")
    return lines


def cutoff(benign_scores: list[float], fpr: float) -> float:
    """The smallest score cut-off that flags at most ``fpr`` of the benign sessions."""
    positive = sorted((s for s in benign_scores if s > 0), reverse=True)
    allowed = int(fpr * len(benign_scores))
    return positive[allowed] + 1e-9 if len(positive) > allowed else 0.0


def rate(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else float("nan")


def evaluate(labels, scores, flagged_fn) -> dict[str, Any]:
    """FPR, recall, cost-weighted recall and latency of one flagging rule on the test corpus."""
    benign = [lb for lb in labels if not lb["is_attack"]]
    attacks = [lb for lb in labels if lb["is_attack"]]
    # flagged_fn(score) -> (flagged, turn at which the evidence was complete or None)
    hits = {lb["session_id"]: flagged_fn(scores[lb["session_id"]]) for lb in labels}
    flagged = {sid: hit[0] for sid, hit in hits.items()}
    excess = sum(max(lb["excess_tokens"], 0) for lb in attacks) or 1
    latencies = [
        max(0, hits[lb["session_id"]][1] - lb["onset_turn"])
        for lb in attacks
        if flagged[lb["session_id"]] and hits[lb["session_id"]][1] is not None and lb["onset_turn"] is not None
    ]
    by_family, by_stealth, by_length, by_form = defaultdict(list), defaultdict(list), defaultdict(list), defaultdict(list)
    fmt_of = {lb["session_id"]: lb.get("agent_format", "claude-code") for lb in labels}
    for lb in attacks:
        by_family[lb["family"]].append(flagged[lb["session_id"]])
        by_stealth[lb.get("stealth")].append(flagged[lb["session_id"]])
        by_length[(lb.get("knobs") or {}).get("chain_length")].append(flagged[lb["session_id"]])
        if "counter_form" in (lb.get("knobs") or {}):
            by_form[f"counter: {lb['knobs']['counter_form']}"].append(flagged[lb["session_id"]])
        if "cursor_in_url" in (lb.get("knobs") or {}):
            by_form["cursor: in a URL" if lb["knobs"]["cursor_in_url"] else "cursor: an argument"].append(flagged[lb["session_id"]])
        if "in_subagent" in (lb.get("info") or {}):
            by_form["placement: in a subagent" if lb["info"]["in_subagent"] else "placement: the main session"].append(flagged[lb["session_id"]])
    return {
        "fpr": rate([flagged[lb["session_id"]] for lb in benign]),
        "recall": rate([flagged[lb["session_id"]] for lb in attacks]),
        "cost_recall": sum(max(lb["excess_tokens"], 0) for lb in attacks if flagged[lb["session_id"]]) / excess,
        "latency": statistics.median(latencies) if latencies else None,
        "by_family": {k: rate(v) for k, v in sorted(by_family.items())},
        "by_stealth": {k: rate(v) for k, v in sorted(by_stealth.items(), key=lambda kv: (kv[0] is None, str(kv[0])))},
        "by_length": {k: (rate(v), len(v)) for k, v in sorted(by_length.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))},
        "by_counter_form": {k: (rate(v), len(v)) for k, v in sorted(by_form.items())},
        "alerts_per_1000": 1000 * sum(flagged.values()) / max(len(flagged), 1),
        "fp_by_family": {k: rate([flagged[lb["session_id"]] for lb in benign if lb["family"] == k])
                         for k in sorted({lb["family"] for lb in benign})},
        # Sessions whose MCP calls each carry new narration (an "explanation" argument) against the rest.
        "by_narration": {k: (rate([flagged[lb["session_id"]] for lb in attacks if bool(lb.get("narration")) == k]),
                             rate([flagged[lb["session_id"]] for lb in benign if bool(lb.get("narration")) == k]))
                         for k in (False, True)},
        # The format the agent's side was written in (Claude Code transcript or Codex rollout).
        "by_agent_format": {k: (rate([flagged[lb["session_id"]] for lb in attacks if fmt_of[lb["session_id"]] == k]),
                                rate([flagged[lb["session_id"]] for lb in benign if fmt_of[lb["session_id"]] == k]),
                                sum(fmt_of[lb["session_id"]] == k for lb in labels))
                            for k in sorted(set(fmt_of.values()))},
    }  # fmt: skip


def fmt(x: Any, turns: bool = False) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    if turns:
        return f"{x:g}"
    if isinstance(x, float):
        return f"{x:.1%}"
    return str(x)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--ref-sessions", type=int, default=1500)
    ap.add_argument("--test-sessions", type=int, default=1500)
    ap.add_argument("--attack-share", type=float, default=0.3)
    ap.add_argument("--ref-seed", type=int, default=101)
    ap.add_argument("--test-seed", type=int, default=202)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--samples", type=Path, help="real logs to audit with the calibrated thresholds (e.g. ../shared/samples)")
    ap.add_argument("--agent-logs-only", action="store_true",
                    help="ingest the agents' logs without the MCP servers' transcripts (what most users have)")
    ap.add_argument("--agent-format", action="append", default=[], metavar="FORMAT=SHARE",
                    help="share of sessions (reference and test) whose agent side is written as codex or otel instead of "
                         "Claude Code, e.g. codex=0.3 (repeatable; default: all Claude Code)")
    args = ap.parse_args(argv)
    agent_formats = parse_shares(ap, args.agent_format)
    args.work.mkdir(parents=True, exist_ok=True)
    transcripts = not args.agent_logs_only
    ref_db, ref_labels = build(args.work, "reference", args.ref_sessions, args.ref_seed, 0.0, agent_formats, transcripts)
    test_db, test_labels = build(args.work, "test", args.test_sessions, args.test_seed, args.attack_share, agent_formats, transcripts)
    with open_store(str(ref_db)) as store:
        thresholds = calibrate_thresholds(load_frames(store), fpr=0.0025)
    config = Config(detectors=thresholds)
    ref_scores, _ = session_scores(ref_db, ref_labels, config)
    test_scores, audit_s = session_scores(test_db, test_labels, config)
    benign_ref = [ref_scores[lb["session_id"]]["score"] for lb in ref_labels if not lb["is_attack"]]
    rows = []
    for target in (0.01, 0.001):
        cut = cutoff(benign_ref, target)
        res = evaluate(test_labels, test_scores, lambda s, cut=cut: (s["score"] > cut and s["score"] > 0, s.get("verdict_turn")))
        rows.append((f"economic_dos, cut-off for ≤ {target:.1%} reference FPR (suspected excess > {cut:,.0f} tokens)", res))
    detectors = sorted({d for s in test_scores.values() for d in s["fired"]})
    for d in detectors:
        rows.append((f"{d}", evaluate(test_labels, test_scores, lambda s, d=d: (d in s["fired"], s["fired"].get(d)))))
    for name in GUARDS:
        rows.append((f"baseline: {name}", evaluate(test_labels, test_scores, lambda s, n=name: (n in s["guards"], s["guards"].get(n)))))
    n_attack = sum(lb["is_attack"] for lb in test_labels)
    lines = [
        "# Detector evaluation on simulated sessions (held-out attack families)",
        "",
        f"Command: `python benchmarks/eval_detectors.py --work {args.work} --ref-sessions {args.ref_sessions} "
        f"--test-sessions {args.test_sessions} --attack-share {args.attack_share} --ref-seed {args.ref_seed} --test-seed {args.test_seed}"
        + (f" --samples {args.samples}" if args.samples else "") + "".join(f" --agent-format {item}" for item in args.agent_format)
        + (" --agent-logs-only" if args.agent_logs_only else "")
        + (f" --out {args.out}`" if args.out else "`"),
        "",
        f"Reference corpus: {len(ref_labels)} benign sessions (seed {args.ref_seed}) — the only data thresholds are calibrated on. "
        f"Test corpus: {len(test_labels)} sessions (seed {args.test_seed}), {n_attack} attacks, {len(test_labels) - n_attack} benign. "
        f"Audit of the test store: {audit_s:.1f} s.",
        "",
        "| rule | test FPR | recall | cost-weighted recall | median latency (turns after onset) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        lines.append(f"| {name} | {fmt(r['fpr'])} | {fmt(r['recall'])} | {fmt(r['cost_recall'])} | {fmt(r['latency'], turns=True)} |")
    combined = rows[0][1]
    lines += ["", "Combined verdict (1 % cut-off), recall per attack family:", "", "| family | recall |", "|---|---:|"]
    lines += [f"| {k} | {fmt(v)} |" for k, v in combined["by_family"].items()]
    lines += ["", "Recall per stealth level (4 = no directive wording):", "", "| stealth | recall |", "|---|---:|"]
    lines += [f"| {k} | {fmt(v)} |" for k, v in combined["by_stealth"].items()]
    lines += ["", "Sessions whose MCP calls each narrate the call in an argument of new words (`explanation`) and the rest:", "",
              "| MCP calls narrated | recall | test FPR |", "|---|---:|---:|"]
    lines += [f"| {'yes' if k else 'no'} | {fmt(r)} | {fmt(f)} |" for k, (r, f) in combined["by_narration"].items()]
    lines += ["", "By the format the agent's side was written in:", "", "| agent log | sessions | recall | test FPR |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {n} | {fmt(r)} | {fmt(f)} |" for k, (r, f, n) in combined["by_agent_format"].items()]
    lines += ["", "Counter loops and cursor drip-feeds by how the counter or cursor is sent (counter: an index +1, an offset in",
              "irregular steps the result names, or \"part N\"; cursor: an argument of its own, or in a URL's query string);",
              "counter, cursor, sponge and coverage attacks by where the chain ran (the main session, or a subagent it",
              "handed the task to):", "",
              "| form | attacks | recall |", "|---|---:|---:|"]
    lines += [f"| {k} | {n} | {fmt(v)} |" for k, (v, n) in combined["by_counter_form"].items()]
    lines += ["", "Recall per chain length T (the attack's knob; overthink: decoys planted):", "", "| T | attacks | recall |", "|---:|---:|---:|"]
    lines += [f"| {k} | {n} | {fmt(v)} |" for k, (v, n) in combined["by_length"].items()]
    lines += ["", f"Alerts per 1,000 test sessions ({n_attack / len(test_labels):.0%} of them attacks): {combined['alerts_per_1000']:.0f}."]
    lines += ["", "False-positive rate per benign family (test corpus):", "", "| family | FPR |", "|---|---:|"]
    lines += [f"| {k} | {fmt(v)} |" for k, v in combined["fp_by_family"].items()]
    lines += ["", "Thresholds calibrated on the reference corpus (0.25 % of its sessions per detector):", "", "```toml"]
    for name, table in sorted(thresholds.items()):
        lines.append(f"[detectors.{name}]")
        lines += [f"{k} = {round(v, 2) if isinstance(v, float) else v}" for k, v in table.items()]
    lines += ["```"]
    if args.samples:
        lines += samples_section(args.samples, args.work, config)
    report = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
