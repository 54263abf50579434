"""Opening tracker databases (MLflow's `mlflow.db`, Trackio's `<project>.db`) without ever writing to them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from assessor.errors import UnreadableSourceError

T = TypeVar("T")

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
SQLITE_MAGIC = b"SQLite format 3\x00"


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection, closed on exit: a live tracker's database is never locked for writing nor changed.

    Raises:
        UnreadableSourceError: the file cannot be opened as SQLite.
    """
    try:
        # `mode=ro` opens without write access; a writer holding a lock makes us wait up to 5 s, not fail at once.
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as error:
        raise UnreadableSourceError(f"{path}: cannot be opened as SQLite ({error}); check its permissions") from error
    try:
        yield db
    finally:
        db.close()  # sqlite3's own context manager only ends a transaction; it never closes


def tables(path: Path, head: bytes) -> set[str]:
    """The table names of an SQLite file; empty when it is not one (judged by its name and first bytes)."""
    if path.suffix.lower() not in SQLITE_SUFFIXES or not head.startswith(SQLITE_MAGIC):
        return set()
    try:
        with read_only(path) as db:
            return {str(row[0]) for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except (sqlite3.Error, UnreadableSourceError):
        return set()


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The column names of a table (schemas change between tracker versions)."""
    return {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}


def read_database(path: Path, parse: Callable[[Path, sqlite3.Connection], T], what: str, writer: str) -> T:
    """`parse(path, db)` on a read-only connection; an SQLite error becomes one line that says what to do.

    Args:
        path: the database file.
        parse: reads what it needs from the open connection.
        what: the database's name in the message (e.g. "the MLflow database").
        writer: who may be writing to it (e.g. "a server"), for the "try again" advice.
    """
    try:
        with read_only(path) as db:
            return parse(path, db)
    except sqlite3.Error as error:
        raise UnreadableSourceError(
            f"{path}: cannot read {what} ({error}); if {writer} is writing to it, try again") from error
