#!/usr/bin/env bash
# usage: CCUSAGE=/path/to/ccusage [PY=python] [TOKAUDIT_CHECKOUT=<checkout>] ./run.sh WORK [SEED ...]
# Generates the exactness corpus for each seed (default 1-5) into WORK/seedN/logs, runs tokaudit and ccusage 20.0.24
# on it (compare.py), prints the per-day table per seed, then a tally over all seeds. Generated data stays in WORK.
set -euo pipefail
WORK=${1:?usage: run.sh WORK [SEED ...]}; shift
SEEDS=("$@"); [ ${#SEEDS[@]} -eq 0 ] && SEEDS=(1 2 3 4 5)
HERE=$(cd "$(dirname "$0")" && pwd)
export CCUSAGE=${CCUSAGE:?set CCUSAGE to the ccusage 20.0.24 binary (benchmarks/README.md, Setup)}
export TOKAUDIT_CHECKOUT=${TOKAUDIT_CHECKOUT:-$(cd "$HERE/../.." && pwd)}
PY=${PY:-python}; export PY
mkdir -p "$WORK"
for s in "${SEEDS[@]}"; do
  rm -rf "$WORK/seed$s"
  env -u PYTHONPATH PYTHONHASHSEED=0 "$PY" "$HERE/gen.py" "$s" "$WORK/seed$s/logs"   # byte for byte the same logs
  "$PY" "$HERE/compare.py" "$WORK/seed$s/logs" "$WORK/seed$s/work" | tee "$WORK/seed$s.txt"
done
"$PY" "$HERE/tally.py" "${SEEDS[@]/#/$WORK/seed}"
