"""Opening the store: SQLAlchemy engine over DuckDB, lock handling, schema checks.

A tokaudit database is one DuckDB file (default ``./tokaudit.duckdb``) or any
SQLAlchemy ``duckdb://`` URL (``duckdb:///:memory:`` for a throw-away store).
DuckDB lets one process write a file at a time; a second writer gets a clear
:class:`DatabaseLockedError` or, with ``wait_s``, waits for the lock. Opening an
older database upgrades it (unless ``upgrade=False``); a database newer than
this tokaudit is refused.

Bulk work goes through the raw DuckDB connection (``Store.duck``): loading
Arrow tables is two orders of magnitude faster than Core ``executemany``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from tokaudit.errors import DatabaseLockedError, DatabaseVersionError, TokauditError
from tokaudit.store import migrate


@dataclass
class Store:
    """An open tokaudit database: one connection, held (with its lock) until :meth:`close`."""

    url: str
    engine: Engine
    conn: Connection

    @property
    def duck(self) -> duckdb.DuckDBPyConnection:
        """The raw DuckDB connection under ``conn`` (same transaction)."""
        return self.conn.connection.driver_connection._ConnectionWrapper__c  # type: ignore[union-attr]

    def revision(self) -> str | None:
        """The schema revision recorded in the database, or None for a blank one."""
        return current_revision(self.duck)

    def close(self) -> None:
        """Release the connection and the file lock."""
        self.conn.close()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def db_url(db: str) -> str:
    """Turn a ``--db`` value (path or URL) into a SQLAlchemy URL."""
    if "://" in db:
        if not db.startswith("duckdb://"):
            raise TokauditError(f"unsupported database URL {db!r}", hint="use a file path or a duckdb:///PATH URL")
        return db
    if db == ":memory:":
        return "duckdb:///:memory:"
    return f"duckdb:///{Path(db).expanduser().resolve()}"


def current_revision(duck: duckdb.DuckDBPyConnection) -> str | None:
    """Read ``alembic_version`` through a raw connection (no Alembic import)."""
    has_table = duck.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'alembic_version'"
    ).fetchall()[0][0]
    if not has_table:
        return None
    rows = duck.execute("SELECT version_num FROM alembic_version").fetchall()
    return rows[0][0] if rows else None


def _connect(url: str, read_only: bool, wait_s: float) -> tuple[Engine, Connection]:
    connect_args = {"read_only": True} if read_only else {}
    engine = sa.create_engine(url, poolclass=NullPool, connect_args=connect_args)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return engine, engine.connect()
        except sa.exc.OperationalError as exc:
            message = str(exc.orig) if exc.orig is not None else str(exc)
            if "lock" not in message.lower():
                engine.dispose()
                raise TokauditError(f"cannot open database {url}: {message}") from exc
            if time.monotonic() >= deadline:
                engine.dispose()
                raise DatabaseLockedError(
                    f"the database {url.removeprefix('duckdb:///')} is in use by another process",
                    hint="wait for it to finish, pass --wait SECONDS to wait for the lock, or use another --db",
                ) from exc
            time.sleep(0.2)


def open_store(
    db: str, *, upgrade: bool = True, read_only: bool = False, wait_s: float = 0.0, check: bool = True
) -> Store:
    """Open (creating if needed) a tokaudit database and make sure its schema is current.

    Args:
        db: a file path, ``:memory:``, or a ``duckdb://`` URL.
        upgrade: upgrade an older schema in place; when False, refuse it with a hint.
        read_only: open without the write lock (several readers may share it).
        wait_s: how long to wait for another process's lock before giving up.
        check: verify (and upgrade) the schema; False only for ``tokaudit db`` commands.
    """
    url = db_url(db)
    if read_only and not _exists(url):
        read_only = False  # nothing to share yet: create it
    engine, conn = _connect(url, read_only, wait_s)
    store = Store(url=url, engine=engine, conn=conn)
    try:
        if check:
            ensure_schema(store, upgrade=upgrade, read_only=read_only)
    except BaseException:
        store.close()
        raise
    return store


def _exists(url: str) -> bool:
    path = url.removeprefix("duckdb:///")
    return path == ":memory:" or Path(path).exists()


def ensure_schema(store: Store, *, upgrade: bool = True, read_only: bool = False) -> None:
    """Bring the schema to head, or raise a DatabaseVersionError that says what to do."""
    revisions = migrate.known_revisions()
    current = store.revision()
    if current == revisions[-1]:
        return
    if current is not None and current not in revisions:
        raise DatabaseVersionError(
            f"the database is at schema revision {current}, newer than this tokaudit knows (head {revisions[-1]})",
            hint="upgrade tokaudit (pip install -U tokaudit), or point --db at another database",
        )
    if current is None and _has_user_tables(store):
        raise DatabaseVersionError(
            f"{store.url} holds tables but no tokaudit schema revision: it is not a tokaudit database",
            hint="point --db at a new file or at an existing tokaudit database",
        )
    if current is not None and (not upgrade or read_only):
        raise DatabaseVersionError(
            f"the database is at schema revision {current}; this tokaudit needs {revisions[-1]}",
            hint="run `tokaudit db upgrade` (or drop --no-upgrade) to migrate it in place",
        )
    migrate.upgrade(store.conn)


def _has_user_tables(store: Store) -> bool:
    return bool(store.duck.execute("SELECT count(*) FROM duckdb_tables() WHERE NOT internal").fetchall()[0][0])
