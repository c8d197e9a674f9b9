#!/usr/bin/env bash
# `tokaudit gate` on logs vs a plain `tokaudit ingest` of the same logs (issue 6: gate ≤ 2× ingest).
#
#   benchmarks/run_gate_bench.sh DATA_DIR
#
# DATA_DIR holds Claude Code logs (e.g. python benchmarks/gen_claude_logs.py --out DATA_DIR
# --total-mib 100 --files 200 --seed 1). Measured with hyperfine on a warm page cache, in ROUNDS
# interleaved rounds (the machines are shared and noisy):
#   ingest  tokaudit ingest DATA_DIR --quiet into a fresh database file (deleted before each run)
#   gate    tokaudit gate DATA_DIR --budget benchmarks/gate-bench.toml --junit ... --sarif ...
#           (in-memory ingest + frames + every detector + budgets + reports; exits 1 when a budget fails,
#           which hyperfine is told to ignore)
# Prints the per-round and pooled means and the gate/ingest ratio; raw JSON stays in $BENCH_TMP.
#
# Environment: ROUNDS (default 3), RUNS per round (default 3), TOKAUDIT_BIN (default: tokaudit on PATH),
#              BENCH_TMP (default: a new folder under ${TMPDIR:-/tmp}).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DATA_DIR" >&2; exit 2; }
DATA=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
TOKAUDIT=${TOKAUDIT_BIN:-tokaudit}
BENCH_TMP=${BENCH_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/gate-bench.XXXXXX")}
mkdir -p "$BENCH_TMP"
DB="$BENCH_TMP/ingest.duckdb"

for round in $(seq 1 "$ROUNDS"); do
  hyperfine --warmup 1 --runs "$RUNS" -i \
    --export-json "$BENCH_TMP/round-$round.json" \
    --prepare "rm -f '$DB' '$DB.wal' '$DB.files'" \
    -n ingest "$TOKAUDIT ingest '$DATA' --db '$DB' --quiet" \
    -n gate "$TOKAUDIT gate '$DATA' --budget '$HERE/gate-bench.toml' --junit '$BENCH_TMP/gate.xml' --sarif '$BENCH_TMP/gate.sarif'" \
    >&2
done

python3 - "$BENCH_TMP" "$ROUNDS" <<'PY'
import json, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
times = {"ingest": [], "gate": []}
print("| round | ingest mean (s) | gate mean (s) | gate / ingest |")
print("|---|--:|--:|--:|")
for r in range(1, rounds + 1):
    res = {x["command"]: x for x in json.load(open(f"{tmp}/round-{r}.json"))["results"]}
    for name in times:
        times[name] += res[name]["times"]
    i, g = res["ingest"]["mean"], res["gate"]["mean"]
    print(f"| {r} | {i:.2f} | {g:.2f} | {g / i:.2f} |")
i, g = statistics.mean(times["ingest"]), statistics.mean(times["gate"])
print(f"| pooled ({len(times['ingest'])} runs each) | {i:.2f} ± {statistics.stdev(times['ingest']):.2f} | {g:.2f} ± {statistics.stdev(times['gate']):.2f} | {g / i:.2f} |")
PY
