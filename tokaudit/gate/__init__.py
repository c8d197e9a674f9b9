"""The CI gate: token and cost budgets, baselines, verdicts, exit codes and CI outputs.

* ``budgets`` — the ``[budgets]`` and ``[[tasks]]`` sections of ``tokaudit.toml``:
  parsed and validated (errors name the bad key and value);
* ``evaluate`` — frames, findings and replay attribution → one verdict per
  budget × scope member (``pass``, ``warn``, ``fail`` or ``inconclusive``);
* ``baseline`` — per-task p50/p95 of session tokens and cost, saved as JSON and
  compared under ``[budgets.max_increase]`` rules;
* ``outputs`` — the terminal table, JSON, JUnit XML, SARIF 2.1.0, GitHub
  annotations and the step-summary Markdown (pure builders, no I/O);
* ``run`` — ``run_gate`` / ``save_baseline_file``: what the CLI calls.

Nothing here writes to the store: a gate over ``--db`` reads it, a gate over
paths ingests them into a throw-away in-memory store.
"""
