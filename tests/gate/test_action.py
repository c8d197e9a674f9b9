"""The composite action's gate step, run as GitHub would run it: inputs as env vars, exit code as an output."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT


def gate_step_script() -> str:
    """The `run:` block of the step with `id: gate` in action.yml (read as text: no YAML parser is needed)."""
    lines = (ROOT / "action.yml").read_text(encoding="utf-8").splitlines()
    start = lines.index("      id: gate")
    run = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    body = []
    for line in lines[run + 1 :]:
        if line.strip() and not line.startswith("        "):
            break
        body.append(line)
    return textwrap.dedent("\n".join(body))


@pytest.mark.parametrize(("budget", "fail_on_warn", "code"), [("cost_usd = { warn = 0.3 }", "false", 0), ("cost_usd = { warn = 0.3 }", "true", 1)])
def test_the_action_runs_the_gate_and_reports_its_exit_code(tmp_path, budget, fail_on_warn, code):
    (tmp_path / "tokaudit.toml").write_text(f"[budgets.session]\n{budget}\n", encoding="utf-8")
    output = tmp_path / "github_output"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GATE_PATHS": f"{FIXTURES / 'claude-code'}\n{FIXTURES / 'codex'}",
        "GATE_BUDGET": "tokaudit.toml",
        "GATE_BASELINE": "",
        "GATE_FAIL_ON_WARN": fail_on_warn,
        "GATE_JUNIT": "gate.xml",
        "GATE_SARIF": "",
        "GATE_ARGS": "--verbose",
    }
    proc = subprocess.run(["bash", "-c", gate_step_script()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert output.read_text(encoding="utf-8") == f"exit-code={code}\n"
    assert (tmp_path / "gate.xml").is_file() and (tmp_path / "summary.md").is_file()
    assert "::warning file=" in proc.stdout or "::error file=" in proc.stdout
