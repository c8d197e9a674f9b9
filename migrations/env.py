"""Alembic environment for tokaudit's DuckDB store.

tokaudit runs migrations itself (``tokaudit db upgrade``, or on opening an older
database) and hands Alembic its open connection through
``config.attributes["connection"]``. Offline mode (``--sql``) prints the DDL.
Autogenerate is not used: duckdb-engine cannot reflect tables on DuckDB 2.x.
"""

from alembic import context
from alembic.ddl.impl import DefaultImpl


class AlembicDuckDBImpl(DefaultImpl):
    """Teach Alembic the ``duckdb`` dialect; DuckDB runs DDL inside transactions."""

    __dialect__ = "duckdb"
    transactional_ddl = True


def run_offline() -> None:
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), literal_binds=True, dialect_name="duckdb")
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = context.config.attributes["connection"]
    context.configure(connection=connection, target_metadata=None)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
