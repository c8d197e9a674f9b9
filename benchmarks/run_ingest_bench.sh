#!/usr/bin/env bash
# Side-by-side ingest benchmark: raw read (cat) vs ccusage vs tokaudit, in ONE run.
#
#   benchmarks/run_ingest_bench.sh DATA_DIR
#
# DATA_DIR is a Claude config dir: DATA_DIR/projects/<project>/<session>.jsonl
# (e.g. made by benchmarks/gen_claude_logs.py). Measures, with hyperfine (warm page cache):
#   a. cat of all files to /dev/null                           (raw-read limit)
#   b. ccusage claude daily --offline --json -z UTC            (peer)
#   c. tokaudit ingest into a fresh database                   (cold ingest; db deleted before each run)
#   d. tokaudit usage --by day --json on the ingested database (warm report)
#   e. tokaudit ingest again with no file changed              (re-ingest)
#   f. peak RSS of b, c, d, e: GNU time -v (largest single process) and, because a tool may
#      parse in several processes, the sampled peak PSS summed over the process tree
# The commands are interleaved in ROUNDS rounds (a b c d e, a b c d e, ...) because the
# machines are shared and noisy; the report pools all runs and also gives per-round ratios.
# Writes a Markdown report to stdout and to $RESULTS_MD (default benchmarks/results-ingest.md);
# raw hyperfine JSON, outputs and logs stay in $BENCH_TMP.
#
# Environment:
#   CCUSAGE_BIN    ccusage native binary (default: /work/scratch/ccusage/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage)
#   TOKAUDIT_BIN   tokaudit command, may contain words, e.g. "python -m tokaudit" (default: tokaudit from PATH)
#   SKIP_TOKAUDIT  1 = run only a, b and the ccusage RSS (also automatic when tokaudit is not found)
#   ROUNDS         rounds of interleaved measurements (default 3)
#   RUNS           timed runs per round for cat / ccusage / cold ingest (default 3)
#   FAST_RUNS      timed runs per round for usage / re-ingest (default 10)
#   RSS_RUNS       GNU time runs per command for peak RSS (default 3; the max is reported)
#   BENCH_TMP      work dir holding bench.duckdb and raw results (default /work/scratch/bench-runs/ingest-<timestamp>)
#   RESULTS_MD     report path (default: benchmarks/results-ingest.md next to this script)
#   INGEST_CMD / USAGE_CMD  override the full tokaudit command lines if the CLI changes
set -uo pipefail

die() { echo "error: $*" >&2; exit 2; }
log() { echo "[bench $(date -u +%H:%M:%S)] $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 DATA_DIR"
DATA=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
[ -d "$DATA/projects" ] || die "$DATA/projects does not exist (DATA_DIR must contain projects/)"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

CCUSAGE_BIN=${CCUSAGE_BIN:-/work/scratch/ccusage/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
FAST_RUNS=${FAST_RUNS:-10}
RSS_RUNS=${RSS_RUNS:-3}
SKIP_TOKAUDIT=${SKIP_TOKAUDIT:-0}
BENCH_TMP=${BENCH_TMP:-/work/scratch/bench-runs/ingest-$(date -u +%Y%m%dT%H%M%SZ)}
RESULTS_MD=${RESULTS_MD:-$HERE/results-ingest.md}
PY=${PYTHON:-python3}

# An installed tokaudit runs from compiled bytecode (pip writes the .pyc files at install time; an
# editable install writes them on first import). A shell with PYTHONDONTWRITEBYTECODE set would time
# Python's compiler on every run instead of tokaudit, so it is unset here (and noted in meta.env).
PYTHONDONTWRITEBYTECODE_WAS=${PYTHONDONTWRITEBYTECODE:-}
unset PYTHONDONTWRITEBYTECODE

command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install -y hyperfine)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install -y time)"
[ -x "$CCUSAGE_BIN" ] || die "ccusage binary not executable: $CCUSAGE_BIN (npm install ccusage@20.0.24 in /work/scratch/ccusage)"

mkdir -p "$BENCH_TMP"/{hf,rss,out} || die "cannot create $BENCH_TMP"
BENCH_TMP=$(cd "$BENCH_TMP" && pwd)
DB="$BENCH_TMP/bench.duckdb"
EMPTY_CODEX="$BENCH_TMP/empty-codex-home"
mkdir -p "$EMPTY_CODEX"
STEPS="$BENCH_TMP/steps.tsv"
: > "$STEPS"
q() { printf '%q' "$1"; }

# ---- tokaudit discovery
TOKAUDIT_NOTE=""
if [ "$SKIP_TOKAUDIT" != "1" ]; then
  if [ -z "${TOKAUDIT_BIN:-}" ]; then
    if command -v tokaudit >/dev/null; then TOKAUDIT_BIN=$(command -v tokaudit)
    else SKIP_TOKAUDIT=1; TOKAUDIT_NOTE="tokaudit not found on PATH and TOKAUDIT_BIN unset"; fi
  fi
else
  TOKAUDIT_NOTE="SKIP_TOKAUDIT=1"
fi
TOKAUDIT_BIN=${TOKAUDIT_BIN:-tokaudit}

# ---- command lines (exactly what hyperfine runs, via sh -c)
CAT_CMD="find $(q "$DATA/projects") -type f -name '*.jsonl' -print0 | xargs -0 cat > /dev/null"
CC_CMD="env CLAUDE_CONFIG_DIR=$(q "$DATA") CODEX_HOME=$(q "$EMPTY_CODEX") $(q "$CCUSAGE_BIN") claude daily --offline --json -z UTC"
INGEST_CMD=${INGEST_CMD:-"$TOKAUDIT_BIN ingest --db $(q "$DB") $(q "$DATA/projects")"}
USAGE_CMD=${USAGE_CMD:-"$TOKAUDIT_BIN usage --by day --db $(q "$DB") --json"}
PREP_CMD="rm -rf $(q "$DB") $(q "$DB.wal") $(q "$DB.tmp")"

step() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$STEPS"; }   # id, label, command, status

# ---- metadata
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host=$(hostname)"
  echo "nproc=$(nproc)"
  echo "cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  echo "kernel=$(uname -sr)"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "hyperfine=$(hyperfine --version 2>&1 | head -1)"
  echo "ccusage=$("$CCUSAGE_BIN" --version 2>&1 | head -1)"
  echo "python=$($PY --version 2>&1)"
  echo "gnu_time=GNU time $(dpkg-query -W -f='${Version}' time 2>/dev/null || echo '?')"
  if [ "$SKIP_TOKAUDIT" != "1" ]; then
    echo "tokaudit=$(sh -c "$TOKAUDIT_BIN --version" 2>&1 | head -1)"
    echo "tokaudit_bin=$TOKAUDIT_BIN"
  else
    echo "tokaudit=not run ($TOKAUDIT_NOTE)"
  fi
  echo "data=$DATA"
  echo "data_files=$(find "$DATA/projects" -type f -name '*.jsonl' | wc -l)"
  echo "data_bytes=$(find "$DATA/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {printf "%d", s}')"
  echo "rounds=$ROUNDS"; echo "runs=$RUNS"; echo "fast_runs=$FAST_RUNS"; echo "rss_runs=$RSS_RUNS"
  echo "bench_tmp=$BENCH_TMP"
  echo "pythondontwritebytecode_unset=${PYTHONDONTWRITEBYTECODE_WAS:-was not set}"
} > "$BENCH_TMP/meta.env"
free -g > "$BENCH_TMP/free.txt"
log "data: $DATA ($(sed -n 's/^data_files=//p' "$BENCH_TMP/meta.env") files); work dir: $BENCH_TMP"

FAILED=0
# ---- one-off checks (also warm the page cache and any .pyc caches)
log "sanity: ccusage once"
if sh -c "$CC_CMD" > "$BENCH_TMP/out/ccusage-daily.json" 2> "$BENCH_TMP/out/ccusage.stderr"; then
  if [ -f "$DATA/generator-stats.json" ]; then
    $PY "$HERE/verify_ccusage.py" "$DATA/generator-stats.json" "$BENCH_TMP/out/ccusage-daily.json" \
      > "$BENCH_TMP/out/verify-ccusage.txt" 2>&1
    log "ccusage vs generator: $(tail -1 "$BENCH_TMP/out/verify-ccusage.txt")"
  fi
else
  log "ccusage FAILED (see $BENCH_TMP/out/ccusage.stderr)"; FAILED=1
fi

TOK_OK=0
if [ "$SKIP_TOKAUDIT" != "1" ]; then
  log "sanity: tokaudit cold ingest + usage once"
  sh -c "$PREP_CMD"
  if sh -c "$INGEST_CMD" > "$BENCH_TMP/out/tokaudit-ingest.out" 2> "$BENCH_TMP/out/tokaudit-ingest.stderr" \
     && sh -c "$USAGE_CMD" > "$BENCH_TMP/out/tokaudit-usage-day.json" 2> "$BENCH_TMP/out/tokaudit-usage.stderr"; then
    TOK_OK=1
  else
    log "tokaudit sanity run FAILED (see $BENCH_TMP/out/tokaudit-*.stderr); tokaudit steps will be skipped"
    TOKAUDIT_NOTE="tokaudit sanity run failed: $(cat "$BENCH_TMP"/out/tokaudit-*.stderr 2>/dev/null | tail -3 | tr '\n|' '  ' | cut -c1-200) (see $BENCH_TMP/out/)"
    FAILED=1
  fi
fi

# ---- timed rounds
hf() {  # id round warmup runs [extra hyperfine args...] -- command
  local id=$1 r=$2 w=$3 n=$4; shift 4
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  if ! hyperfine --style basic --warmup "$w" --runs "$n" "${args[@]}" -n "$id" \
        --export-json "$BENCH_TMP/hf/$id-r$r.json" "$1" >> "$BENCH_TMP/hyperfine.log" 2>&1; then
    log "  $id round $r FAILED (see $BENCH_TMP/hyperfine.log)"; echo "$id" >> "$BENCH_TMP/failed.txt"; FAILED=1
    return 1
  fi
  log "  $id r$r: $($PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f s +- %.3f" % (r["mean"], r["stddev"] or 0))' "$BENCH_TMP/hf/$id-r$r.json")"
}

for r in $(seq 1 "$ROUNDS"); do
  log "round $r/$ROUNDS"
  hf cat "$r" 1 "$RUNS" -- "$CAT_CMD"
  hf ccusage "$r" 1 "$RUNS" -- "$CC_CMD"
  if [ "$TOK_OK" = 1 ]; then
    hf ingest_cold "$r" 0 "$RUNS" --prepare "$PREP_CMD" -- "$INGEST_CMD"
    # the database now holds one complete ingest
    hf usage_warm "$r" 2 "$FAST_RUNS" -- "$USAGE_CMD"
    hf reingest_nochange "$r" 1 "$FAST_RUNS" -- "$INGEST_CMD"
  fi
done

# ---- peak RSS (GNU time -v); max over RSS_RUNS runs
rss() {  # id prepare command: GNU time -v (max single-process RSS) under a process-tree sampler (summed RSS/PSS)
  local id=$1 prep=$2 cmd=$3 i
  for i in $(seq 1 "$RSS_RUNS"); do
    [ -n "$prep" ] && sh -c "$prep"
    $PY "$HERE/peak_mem.py" --json "$BENCH_TMP/rss/$id-$i.tree.json" -- \
      /usr/bin/time -v -o "$BENCH_TMP/rss/$id-$i.txt" sh -c "$cmd" > /dev/null 2>> "$BENCH_TMP/rss/$id.stderr" \
      || { log "  rss $id run $i exited non-zero"; echo "rss:$id" >> "$BENCH_TMP/failed.txt"; FAILED=1; }
  done
  log "  rss $id: time -v max $(grep -h 'Maximum resident' "$BENCH_TMP"/rss/$id-*.txt | awk '{print $NF}' | sort -n | tail -1) KiB;" \
      "tree PSS max $(cat "$BENCH_TMP"/rss/$id-*.tree.json | $PY -c 'import sys,json; print(max(json.loads(l)["tree_pss_peak_kb"] for l in sys.stdin))') KiB ($RSS_RUNS runs)"
}
log "peak RSS"
rss ccusage "" "$CC_CMD"
if [ "$TOK_OK" = 1 ]; then
  rss ingest_cold "$PREP_CMD" "$INGEST_CMD"
  rss usage_warm "" "$USAGE_CMD"
  rss reingest_nochange "" "$INGEST_CMD"
fi
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$BENCH_TMP/meta.env"

# ---- steps for the report
step cat "cat all files > /dev/null (raw-read limit)" "$CAT_CMD" ok
step ccusage "ccusage claude daily --offline --json" "$CC_CMD" ok
if [ "$TOK_OK" = 1 ]; then
  step ingest_cold "tokaudit ingest, cold (fresh db)" "$INGEST_CMD" "prepare: $PREP_CMD"
  step usage_warm "tokaudit usage --by day --json, warm" "$USAGE_CMD" ok
  step reingest_nochange "tokaudit ingest, no file changed" "$INGEST_CMD" ok
else
  reason=${TOKAUDIT_NOTE:-tokaudit sanity run failed}
  step ingest_cold "tokaudit ingest, cold (fresh db)" "$INGEST_CMD" "skipped: $reason"
  step usage_warm "tokaudit usage --by day --json, warm" "$USAGE_CMD" "skipped: $reason"
  step reingest_nochange "tokaudit ingest, no file changed" "$INGEST_CMD" "skipped: $reason"
fi

$PY "$HERE/bench_report.py" "$BENCH_TMP" > "$BENCH_TMP/report.md" || { log "report generation failed"; exit 1; }
cp "$BENCH_TMP/report.md" "$RESULTS_MD"
cat "$BENCH_TMP/report.md"
log "report written to $RESULTS_MD (raw results in $BENCH_TMP)"
exit "$FAILED"
