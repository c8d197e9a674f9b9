"""``tokaudit schema`` prints the generic format's JSON Schema exactly as shipped in the package."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.conftest import ROOT
from tokaudit.cli import cli

SHIPPED = ROOT / "tokaudit" / "schemas" / "generic-v1.schema.json"


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


def test_schema_prints_the_shipped_file():
    out = run("schema")
    assert out == SHIPPED.read_text(encoding="utf-8")
    assert json.loads(out) == json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert json.loads(out)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert run("schema", "--format", "generic") == out


def test_schema_rejects_formats_without_a_schema():
    assert "Invalid value for '--format'" in run("schema", "--format", "codex", expect=2)


def test_schema_help_has_an_example():
    assert "tokaudit schema > generic-v1.schema.json" in run("schema", "--help")
