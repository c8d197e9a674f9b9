"""Time each stage of an audit over a store (not a test): frames, features, every detector, quotes.

Usage: python benchmarks/prof_audit.py STORE.duckdb [--batch-rows N]   (wrap in /usr/bin/time -v for peak RSS)

Runs ``analyze.audit.run_audit`` without saving (what ``tokaudit audit --no-save``
does), batches included: a store of more than ``--batch-rows`` requests plus tool
calls (default: the audit's own ``BATCH_ROWS``) is read in batches of whole session
groups. Prints the time per batch, per stage and per detector.
"""

from __future__ import annotations

import argparse
import time

from tokaudit.analyze.audit import BATCH_ROWS, run_audit
from tokaudit.store import open_store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--batch-rows", type=int, default=BATCH_ROWS)
    args = ap.parse_args()
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        print(f"batch {done}/{total}, {time.perf_counter() - started:.1f} s so far", flush=True)

    with open_store(args.db) as store:
        result = run_audit(store, save=False, batch_rows=args.batch_rows, on_progress=progress)
    print("detectors", {name: round(s, 1) for name, s in result.detector_seconds.items()})
    print("stages", {name: round(s, 1) for name, s in result.stage_seconds.items()}, f"{len(result.findings):,} findings, {result.sessions:,} sessions")
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
