"""Time each stage of an audit over a store (not a test): frames, features, every detector, quotes.

Usage: python benchmarks/prof_audit.py STORE.duckdb   (wrap in /usr/bin/time -v for peak RSS)
"""

from __future__ import annotations

import sys
import time

from tokaudit.analyze.audit import build_context, quote_results, run_detectors
from tokaudit.analyze.detectors import resolve_params
from tokaudit.analyze.frames import load_frames
from tokaudit.store import open_store


def main(db: str) -> None:
    started = time.perf_counter()
    with open_store(db) as store:
        t = time.perf_counter()
        frames = load_frames(store)
        print(f"frames {time.perf_counter() - t:.1f} s: {frames.calls.height:,} requests, {frames.tools.height:,} tool calls", flush=True)
        t = time.perf_counter()
        context = build_context(frames)
        print(f"features + cohorts {time.perf_counter() - t:.1f} s", flush=True)
        findings, seconds = run_detectors(context, resolve_params())
        print("detectors", {name: round(s, 1) for name, s in seconds.items()}, f"= {sum(seconds.values()):.1f} s", flush=True)
        t = time.perf_counter()
        quote_results(store, findings)
        print(f"quotes {time.perf_counter() - t:.1f} s, {len(findings):,} findings", flush=True)
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1])
