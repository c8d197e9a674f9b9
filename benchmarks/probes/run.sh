#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] run.sh PROBE_DIR TAG SEED...   (each probe's own run.sh calls this)
# Generates each seed with PROBE_DIR/gen.py, ingests it into its own fresh DuckDB, audits, scores (score.py): prints
# the table and writes PROBE_DIR/work/TAG/results.md (work/ is not tracked).
set -euo pipefail
PROBE=$(cd "${1:?usage: run.sh PROBE_DIR TAG SEED...}" && pwd); TAG=${2:?usage: run.sh PROBE_DIR TAG SEED...}; shift 2
SCORE=$(cd "$(dirname "$0")" && pwd)/score.py
cd "$PROBE"
PY=${PY:-python}        # runs tokaudit as `python -m tokaudit.cli`, so PYTHONPATH picks the checkout under test
GENPY=${GENPY:-python}  # runs gen.py; filler text may come from this interpreter's standard library (written on 3.11.7)
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
for seed in "$@"; do one "$seed" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
"$PY" "$SCORE" "$PROBE" "$OUT" "$TAG" "$@" | tee "$OUT/results.md"
