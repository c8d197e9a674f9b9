#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] ./run.sh TAG
# Generates seeds 171-173, ingests each into its own fresh DuckDB, audits, scores: prints the table and writes
# work/TAG/results.md (work/ is not tracked).
set -euo pipefail
TAG=${1:?usage: run.sh TAG}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python}        # runs tokaudit as `python -m tokaudit.cli`, so PYTHONPATH picks the checkout under test
GENPY=${GENPY:-python}  # runs gen.py; its text comes from this interpreter's standard library (written on 3.11.7)
# tokaudit runs from each seed's folder: a relative PYTHONPATH (one checkout) is made absolute first.
if [ -n "${PYTHONPATH:-}" ]; then PYTHONPATH=$(cd "$PYTHONPATH" && pwd); export PYTHONPATH; fi
TA="$PY -m tokaudit.cli"
ROOT=$HERE/work/$TAG
rm -rf "$ROOT"; mkdir -p "$ROOT"
"$PY" -c 'import tokaudit; print("tokaudit:", tokaudit.__file__)' | tee "$ROOT/which.txt"
for SEED in 171 172 173; do
  D=$ROOT/$SEED; mkdir -p "$D"
  env -u PYTHONPATH "$GENPY" "$HERE/gen.py" $SEED "$D/logs" > "$D/gen.txt"
  cp "$D/logs/labels.json" "$D/labels.json"
  DB=$D/t.duckdb
  (cd "$D" && $TA ingest --db "$DB" "$D/logs/openhands" "$D/logs/swe-agent" "$D/logs/otel" "$D/logs/generic" "$D/logs/mcp-alone" --final --json > "$D/ingest.json" 2> "$D/ingest.err") || echo "ingest exit $? (seed $SEED)" >&2
  (cd "$D" && $TA audit --db "$DB" > "$D/audit.txt" 2> "$D/audit.err") || echo "audit exit $? (seed $SEED)" >&2
  (cd "$D" && $TA findings --db "$DB" --json --detector economic_dos > "$D/findings.json")
  (cd "$D" && $TA findings --db "$DB" --json > "$D/findings-all.json")
  (cd "$D" && $TA usage --db "$DB" --by session --json > "$D/usage.json")
done
"$PY" "$HERE/score.py" "$ROOT" "$TAG" 171 172 173 | tee "$ROOT/results.md"
