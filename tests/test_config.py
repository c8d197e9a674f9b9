"""Config files: lookup order, validation messages that name the key and value."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tokaudit.config import load_config, parse_config, resolve_db
from tokaudit.errors import ConfigError


def test_tokaudit_toml_then_pyproject(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tokaudit]\ndb = "from-pyproject.duckdb"\n')
    assert load_config().db == "from-pyproject.duckdb"
    (tmp_path / "tokaudit.toml").write_text('db = "from-toml.duckdb"\n[pricing.overrides."m"]\ninput_mtok = 1\noutput_mtok = 2.5\n')
    config = load_config()
    assert config.db == "from-toml.duckdb"
    assert config.price_overrides["m"].output_mtok == Decimal("2.5")


def test_db_precedence(monkeypatch):
    config = parse_config({"db": "c.duckdb"})
    assert resolve_db(None, config) == "c.duckdb"
    monkeypatch.setenv("TOKAUDIT_DB", "env.duckdb")
    assert resolve_db(None, config) == "env.duckdb"
    assert resolve_db("opt.duckdb", config) == "opt.duckdb"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"dbb": "x"}, "unknown key 'dbb'"),
        ({"max_line_bytes": "big"}, "'max_line_bytes' must be an integer"),
        ({"pricing": {"overrides": {"m": {"input_mtok": 1}}}}, "needs 'output_mtok'"),
        ({"pricing": {"overrides": {"m": {"input_mtok": -1, "output_mtok": 1}}}}, "non-negative"),
        ({"pricing": {"overrides": {"m": {"input_mtok": 1, "output_mtok": 1, "cache_mtok": 1}}}}, "unknown key"),
    ],
)
def test_bad_values_are_named(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(data, "tokaudit.toml")


def test_invalid_toml(tmp_path):
    bad = tmp_path / "tokaudit.toml"
    bad.write_text("db = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_pyproject_without_tokaudit_is_not_parsed(tmp_path, monkeypatch):
    # A project's own pyproject.toml is none of tokaudit's business: even a broken one must not
    # stop a report run in that folder; one that configures tokaudit is still checked.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = \n')
    assert load_config().source == "defaults"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.tokaudit]\ndb = \n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config()


def test_the_readmes_configuration_example_loads_and_names_real_settings(tmp_path, monkeypatch):
    """A user copies the README's ``tokaudit.toml`` example: it must be valid TOML (one table per detector) and every
    setting in it must be one the detectors have."""
    from pathlib import Path

    from tokaudit.analyze.detectors import resolve_params

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    example = readme.split("# tokaudit.toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "tokaudit.toml").write_text(example, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.detectors and "tool_surface_change" in config.detectors
    resolve_params(config.detectors)  # an unknown setting is an error that names it
