"""Time each stage of an audit over a store (not a test): frames, features, every detector, quotes.

Usage: python benchmarks/prof_audit.py STORE.duckdb [--batch-rows N]   (wrap in /usr/bin/time -v for peak RSS)

The stages are those of ``tokaudit audit --no-save`` (``analyze.audit.run_audit``),
including its batches: a store of more than ``--batch-rows`` requests plus tool calls
(default: the audit's own ``BATCH_ROWS``) is read in batches of whole session groups.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from tokaudit.analyze.audit import BATCH_DUCKDB_MEMORY, BATCH_ROWS, build_context, capped_duckdb_memory, quote_results, run_detectors
from tokaudit.analyze.detectors import resolve_params
from tokaudit.analyze.frames import load_frames, session_batches
from tokaudit.store import open_store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--batch-rows", type=int, default=BATCH_ROWS)
    args = ap.parse_args()
    started = time.perf_counter()
    params = resolve_params()
    stages: Counter[str] = Counter()
    detectors: Counter[str] = Counter()
    findings = []
    with open_store(args.db) as store:
        t = time.perf_counter()
        batches = session_batches(store, None, None, args.batch_rows)
        stages["batching"] = time.perf_counter() - t
        print(f"{len(batches) if batches else 1} batch(es)", flush=True)
        with capped_duckdb_memory(store, BATCH_DUCKDB_MEMORY if batches else None):
            for i, batch in enumerate(batches or [None], 1):
                t = time.perf_counter()
                frames = load_frames(store, batch=batch)
                stages["frames"] += time.perf_counter() - t
                t = time.perf_counter()
                context = build_context(frames)
                stages["features + cohorts"] += time.perf_counter() - t
                found, seconds = run_detectors(context, params)
                findings += found
                detectors.update(seconds)
                print(f"batch {i}: {frames.calls.height:,} requests, {frames.tools.height:,} tool calls, "
                      f"{time.perf_counter() - started:.1f} s so far", flush=True)
                del frames, context
        stages["detectors"] = sum(detectors.values())
        t = time.perf_counter()
        quote_results(store, findings)
        stages["quotes"] = time.perf_counter() - t
    print("detectors", {name: round(s, 1) for name, s in detectors.items()})
    print("stages", {name: round(s, 1) for name, s in stages.items()}, f"{len(findings):,} findings")
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
