#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] ./run.sh TAG
# Generates seeds 181-183, ingests each into its own fresh DuckDB, audits, scores: prints the table and writes
# work/TAG/results.md (work/ is not tracked).
set -euo pipefail
TAG=${1:?usage: run.sh TAG}
cd "$(dirname "$0")"
PY=${PY:-python}        # runs tokaudit as `python -m tokaudit.cli`, so PYTHONPATH picks the checkout under test
GENPY=${GENPY:-python}  # runs gen.py; its filler text comes from this interpreter's standard library (written on 3.11.7)
ta() { "$PY" -m tokaudit.cli "$@"; }
OUT=work/$TAG
rm -rf "$OUT"; mkdir -p "$OUT"
"$PY" -c 'import tokaudit; print("tokaudit:", tokaudit.__file__)' | tee "$OUT/which.txt"
one() {
  local seed=$1 D=$OUT/seed$1
  mkdir -p "$D"
  env -u PYTHONPATH "$GENPY" gen.py "$seed" "$D/logs" > "$D/gen.txt"
  local DB=$D/tokaudit.duckdb
  ta ingest --db "$DB" --json "$D/logs" > "$D/ingest.json"
  ta audit --db "$DB" --json > "$D/audit.json"
  ta findings --db "$DB" --json --detector economic_dos > "$D/findings-economic_dos.json"
  ta findings --db "$DB" --json > "$D/findings-all.json"
  ta usage --db "$DB" --by session --json > "$D/usage.json"
}
pids=()
for seed in 181 182 183; do one "$seed" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
"$PY" score.py "$OUT" "$TAG" | tee "$OUT/results.md"
