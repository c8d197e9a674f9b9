"""Every command in a fresh interpreter, as a user runs it.

The store opens DuckDB's engine without the ``duckdb`` package's Python layer (it makes start-up
~120 ms slower) and loads that layer only where Arrow tables or the relational API are used
(``Store.relational``). In-process tests cannot catch a path that forgot it — the test run has
imported ``duckdb`` long before — so these run each command in a new process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _tokaudit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOKAUDIT_DB": str(tmp_path / "t.duckdb"), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from tokaudit.cli import cli; cli()", *args],
        env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip


def test_the_main_commands_run_in_a_fresh_interpreter(tmp_path):
    # The schema first: migrating loads SQLAlchemy and with it the whole duckdb package.
    assert _tokaudit(tmp_path, "db", "upgrade").returncode == 0
    ingest = _tokaudit(tmp_path, "ingest", str(FIXTURES), "--json")
    assert ingest.returncode == 0, ingest.stderr
    assert json.loads(ingest.stdout)["files"]["new"] > 0

    usage = _tokaudit(tmp_path, "usage", "--by", "day", "--json")
    assert usage.returncode == 0, usage.stderr
    assert sum(row["total_tokens"] for row in json.loads(usage.stdout)["rows"]) > 0

    audit = _tokaudit(tmp_path, "audit", "--json")
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)["summary"]["sessions"] > 0

    findings = _tokaudit(tmp_path, "findings", "--json")
    assert findings.returncode == 0, findings.stderr
    assert len(json.loads(findings.stdout)) == json.loads(audit.stdout)["summary"]["findings"]

    session = json.loads(_tokaudit(tmp_path, "usage", "--by", "session", "--json").stdout)["rows"][0]["session"]
    show = _tokaudit(tmp_path, "show", session)
    assert show.returncode == 0, show.stderr
    assert session.split(":")[-1][:8] in show.stdout

    report = _tokaudit(tmp_path, "report", "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert json.loads((tmp_path / "report" / "report.json").read_text())

    budget = tmp_path / "budget.toml"
    budget.write_text("[budgets.session]\ncost_usd = { fail = 0.000001 }\n")
    gate = _tokaudit(tmp_path, "gate", str(FIXTURES / "claude-code"), "--budget", str(budget), "--junit", str(tmp_path / "gate.xml"))
    assert gate.returncode == 1, gate.stderr
    assert "<testsuite" in (tmp_path / "gate.xml").read_text()

    again = _tokaudit(tmp_path, "ingest", str(FIXTURES), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files"]["unchanged"] == json.loads(ingest.stdout)["files"]["new"]
