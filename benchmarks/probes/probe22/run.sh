#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] ./run.sh TAG
# Generates seeds 221-223, ingests each into its own fresh DuckDB, audits, scores: prints the table and writes
# work/TAG/results.md (work/ is not tracked). The steps are the probes' shared ../run.sh and ../score.py.
exec "$(dirname "$0")/../run.sh" "$(dirname "$0")" "${1:?usage: run.sh TAG}" 221 222 223
