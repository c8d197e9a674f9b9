"""Analysis over the store: pricing, usage breakdowns, detectors and audits."""

import os

# polars allocates through its own jemalloc, which by default hands freed pages back to the kernel within
# seconds. An audit builds and drops frames of the same sizes batch after batch, so each batch faulted its
# memory in again: on a 10M-row store half the page faults and a sixth of the audit's time
# (benchmarks/results-detectors-speed.md). Kept pages are reused instead; the peak stays under the budget.
# The variable is read when polars loads, so it is set before any analysis module imports polars (a
# value the user set wins).
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:-1,muzzy_decay_ms:-1")
