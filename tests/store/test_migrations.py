"""Schema migrations: blank -> head matches tables.py, every earlier revision upgrades, versions are checked."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest
import sqlalchemy as sa

from tokaudit.errors import DatabaseLockedError, DatabaseVersionError
from tokaudit.store import migrate, open_store, tables
from tokaudit.store.engine import db_url


def columns_in_db(duck) -> dict[str, list[tuple[str, str]]]:
    rows = duck.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name NOT IN ('alembic_version', 'llm_calls_dedup') ORDER BY table_name, ordinal_position"
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        out.setdefault(table, []).append((column, dtype))
    return out


def columns_in_metadata() -> dict[str, list[tuple[str, str]]]:
    names = {sa.BigInteger: "BIGINT", sa.Integer: "INTEGER", sa.Text: "VARCHAR", sa.Boolean: "BOOLEAN", sa.DateTime: "TIMESTAMP", sa.Date: "DATE", sa.Double: "DOUBLE", tables.UBigInteger: "UBIGINT"}

    def dtype(c):
        if isinstance(c.type, sa.ARRAY):
            return names[type(c.type.item_type)] + "[]"
        if isinstance(c.type, sa.Numeric):
            return f"DECIMAL({c.type.precision},{c.type.scale})"
        return names[type(c.type)]

    return {t.name: [(c.name, dtype(c)) for c in t.columns] for t in tables.metadata.sorted_tables}


def test_blank_database_upgraded_to_head_matches_tables_py(db_path):
    with open_store(db_path) as store:
        assert store.revision() == migrate.head_revision()
        assert columns_in_db(store.duck) == columns_in_metadata()


def test_cheap_revision_list_agrees_with_alembic():
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config())
    chain = [rev.revision for rev in reversed(list(script.walk_revisions()))]
    assert chain == migrate.known_revisions()
    assert script.get_current_head() == migrate.head_revision()


@pytest.mark.parametrize("start", migrate.known_revisions()[:-1])
def test_every_earlier_revision_upgrades_to_head_keeping_data(tmp_path, start):
    path = str(tmp_path / f"at-{start}.duckdb")
    engine = sa.create_engine(db_url(path), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        migrate.upgrade(conn, start)
    engine.dispose()
    con = duckdb.connect(path)
    con.execute("INSERT INTO sessions (source_id, session_id, agent) VALUES (1, 'claude-code:x', 'claude-code')")
    con.close()
    with pytest.raises(DatabaseVersionError, match="tokaudit db upgrade"):
        open_store(path, upgrade=False)
    with open_store(path) as store:
        assert store.revision() == migrate.head_revision()
        assert store.duck.execute("SELECT session_id FROM sessions").fetchall() == [("claude-code:x",)]
        assert columns_in_db(store.duck) == columns_in_metadata()


def test_newer_database_is_refused(db_path):
    with open_store(db_path) as store:
        store.duck.execute("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(DatabaseVersionError, match="newer than this tokaudit"):
        open_store(db_path)


def test_foreign_database_is_refused(db_path):
    con = duckdb.connect(db_path)
    con.execute("CREATE TABLE something (x INTEGER)")
    con.close()
    with pytest.raises(DatabaseVersionError, match="not a tokaudit database"):
        open_store(db_path)


def test_second_writer_gets_a_clear_error_or_waits(db_path):
    open_store(db_path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({db_path!r}); print('locked', flush=True); time.sleep(1.5)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(DatabaseLockedError, match="in use by another process") as info:
        open_store(db_path)
    assert "--wait" in str(info.value)
    with open_store(db_path, wait_s=20) as store:  # waits for the holder to exit
        assert store.revision() == migrate.head_revision()
    holder.wait()


def test_offline_sql_is_printed():
    from alembic import command

    config = migrate.alembic_config()
    import io

    buf = io.StringIO()
    config.output_buffer = buf
    command.upgrade(config, "head", sql=True)
    assert "CREATE TABLE llm_calls" in buf.getvalue()


def test_duckdb_draws_no_progress_bar_of_its_own_into_tokaudits_output(db_path):
    """DuckDB's own bar (on queries over two seconds) went to stdout even with --quiet or into a file."""
    with open_store(db_path) as store:
        assert store.duck.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
    with open_store(db_path, read_only=True) as store:
        assert store.duck.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
