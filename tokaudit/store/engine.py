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
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

try:
    # The engine itself. The ``duckdb`` package re-exports it (its own docstring says so) and adds
    # a Python layer — the relational API, Arrow scans, a version lookup through importlib.metadata —
    # that costs ~120 ms at import, a third of a warm ``tokaudit usage``. Running SQL and fetching
    # rows needs only the engine; ``Store.relational`` loads the rest for the commands that use it.
    import _duckdb as duckdb
except ImportError:  # a duckdb that ships the engine under another name
    import duckdb

from tokaudit.errors import DatabaseLockedError, DatabaseVersionError, TokauditError
from tokaudit.store import migrate
from tokaudit.store.urls import db_path, db_url  # noqa: F401  (re-exported: open_store takes either)

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine


class Store:
    """An open tokaudit database: one DuckDB connection, held (with its lock) until :meth:`close`.

    ``duck`` is the raw DuckDB connection used for bulk loads and analytical
    queries. ``engine`` / ``conn`` are a SQLAlchemy engine and connection over
    the *same* DuckDB connection (same transaction), created on first use:
    importing SQLAlchemy costs ~0.25 s, which a no-op incremental ingest cannot
    afford, so commands that only read and load never pay it.
    """

    def __init__(self, url: str, duck: duckdb.DuckDBPyConnection, *, read_only: bool = False) -> None:
        self.url = url
        self.duck = duck
        self.read_only = read_only
        self._memory_limits: list[str] = []  # those ``memory_limit`` set, innermost last

    @property
    def in_memory(self) -> bool:
        """True for a throw-away ``:memory:`` store (its data can live nowhere but in memory)."""
        return self.url.removeprefix("duckdb:///") == ":memory:"

    @cached_property
    def relational(self) -> duckdb.DuckDBPyConnection:
        """``duck`` with the ``duckdb`` package's Python layer loaded: ``sql(...).to_arrow_table()``
        and ``register`` of Arrow tables work only once it is (it adds them to every connection)."""
        import duckdb as with_python_layer  # noqa: F401  (imported for its side effect)

        return self.duck

    @cached_property
    def engine(self) -> Engine:
        """SQLAlchemy engine (duckdb-engine dialect) whose only connection is ``duck``."""
        import sqlalchemy as sa
        from duckdb_engine import ConnectionWrapper
        from sqlalchemy.pool import StaticPool

        return sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(self.duck), poolclass=StaticPool)

    @cached_property
    def conn(self) -> Connection:
        """A SQLAlchemy connection on ``engine``."""
        return self.engine.connect()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """``duck`` inside one transaction: committed when the block ends, rolled back if it raises."""
        self.duck.execute("BEGIN TRANSACTION")
        try:
            yield self.duck
        except BaseException:
            self.duck.execute("ROLLBACK")
            raise
        self.duck.execute("COMMIT")

    @contextmanager
    def memory_limit(self, limit: str) -> Iterator[None]:
        """DuckDB's memory limit (its caches and working memory; it spills beyond) set to ``limit`` for a while, then restored."""
        before = self.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        self._memory_limits.append(limit)
        self.duck.execute(f"SET memory_limit = '{limit}'")
        try:
            yield
        finally:
            self._memory_limits.pop()
            if self._memory_limits:
                # A limit set around this one comes back as it was written: DuckDB prints a limit rounded, and
                # setting the printed value again would take it down a little each time.
                self.duck.execute(f"SET memory_limit = '{self._memory_limits[-1]}'")
            else:
                # RESET restores the default exactly; a limit set by hand comes back as DuckDB printed it.
                self.duck.execute("RESET memory_limit")
                if self.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != before:
                    self.duck.execute(f"SET memory_limit = '{before}'")

    def revision(self) -> str | None:
        """The schema revision recorded in the database, or None for a blank one."""
        return current_revision(self.duck)

    def close(self) -> None:
        """Release the connection and the file lock."""
        if "conn" in self.__dict__:
            self.conn.close()
        if "engine" in self.__dict__:
            self.engine.dispose()
        self.duck.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def current_revision(duck: duckdb.DuckDBPyConnection) -> str | None:
    """Read ``alembic_version`` through a raw connection (no Alembic import)."""
    # Asking for the table directly is the cheapest test (a catalog listing costs ~10 ms on a fresh
    # connection, which every read command pays).
    try:
        rows = duck.execute("SELECT version_num FROM main.alembic_version").fetchall()
    except duckdb.CatalogException:
        return None
    return rows[0][0] if rows else None


def _connect(url: str, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    path = url.removeprefix("duckdb:///")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            duck = duckdb.connect(path, read_only=read_only)
            # DuckDB 2.0.1's compressed materialization returns wrong sums after some joins (a
            # HUGEINT squeezed into a smaller type: negative byte totals); correctness first.
            duck.execute("SET disabled_optimizers = 'compressed_materialization'")
            # DuckDB draws its own progress bar on long queries, even into a file or with --quiet; tokaudit
            # shows its own progress where there is a terminal.
            duck.execute("SET enable_progress_bar = false")
            return duck
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise TokauditError(f"cannot open database {path}: {exc}") from exc
            if time.monotonic() >= deadline:
                raise DatabaseLockedError(
                    f"the database {path} is in use by another process",
                    hint="wait for it to finish, pass --wait SECONDS to wait for the lock, or use another --db",
                ) from exc
            time.sleep(0.2)
        except duckdb.Error as exc:
            raise TokauditError(f"cannot open database {path}: {exc}", hint="is it a DuckDB file?") from exc


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
    store = Store(url, _connect(url, read_only, wait_s), read_only=read_only)
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
    # Alembic worked through SQLAlchemy; close that connection so later raw
    # DuckDB statements do not run inside its transaction.
    store.conn.close()
    del store.__dict__["conn"]


def _has_user_tables(store: Store) -> bool:
    return bool(store.duck.execute("SELECT count(*) FROM duckdb_tables() WHERE NOT internal").fetchall()[0][0])
