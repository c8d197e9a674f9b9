#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] [PY=...] [GENPY=...] ./run.sh TAG
# Generates seeds 261-263, ingests each into its own fresh DuckDB, audits, scores: prints the table and writes
# work/TAG/results.md (work/ is not tracked). The steps are the probes' shared ../run.sh and ../score.py.
exec "$(dirname "$0")/../run.sh" "$(dirname "$0")" "${1:?usage: run.sh TAG}" 261 262 263
