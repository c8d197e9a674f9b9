#!/usr/bin/env bash
# usage: [PYTHONPATH=<a tokaudit checkout>] ./run.sh TAG
# Generates seeds 231-233, ingests each into its own fresh DuckDB, audits, scores the OpenHands and OTel cohorts: prints
# the table and writes work/TAG/results.md (work/ is not tracked); then `python swe_score.py work/TAG 231 232 233` scores
# the SWE-agent cohort (work/TAG/results-swe.md). The steps are the probes' shared ../run.sh and ../score.py.
exec "$(dirname "$0")/../run.sh" "$(dirname "$0")" "${1:?usage: run.sh TAG}" 231 232 233
