"""The built wheel carries the Alembic scripts, and an installed (non-editable) tokaudit upgrades an old database."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def test_installed_wheel_upgrades_an_old_database(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)],
        check=True,
    )
    (wheel,) = wheels.glob("tokaudit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tokaudit/_migrations/env.py" in names
    assert any(n.startswith("tokaudit/_migrations/versions/0001_") for n in names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)], check=True)
    db = tmp_path / "old.duckdb"
    script = f"""
import sqlalchemy as sa
import tokaudit
from tokaudit.store import migrate, open_store
from tokaudit.store.urls import db_url
assert tokaudit.__file__.startswith({str(site)!r}), tokaudit.__file__
engine = sa.create_engine(db_url({str(db)!r}), poolclass=sa.pool.NullPool)
with engine.connect() as conn:
    migrate.upgrade(conn, "0001")
engine.dispose()
with open_store({str(db)!r}) as store:
    print(migrate.migrations_dir(), store.revision(), migrate.head_revision())
"""
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    migrations_dir, revision, head = out
    assert migrations_dir.startswith(str(site)) and migrations_dir.endswith("_migrations")
    assert revision == head
