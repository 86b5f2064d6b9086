"""What Tightfit's SQLite files (chat history, journey) share: schema versions in PRAGMA user_version, stepped
forward by a list of migrations in one transaction, so a file is either migrated whole or left as it was; and
writes as one immediate transaction under the store's lock."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from gui.core.words import english_error

__all__ = ["migrate", "wal_mode", "write_transaction"]


def migrate(
    db: sqlite3.Connection, version: int, target: int, steps: Mapping[int, Callable[[sqlite3.Connection], None]]
) -> None:
    """Run ``steps[version]`` up to ``steps[target - 1]`` (each takes the file one version on) and set the
    version to ``target``, all or nothing.

    ``version`` is what the caller read before: another process opening the same file at the same moment may
    have migrated it since, so the version is read again under the write lock and only the steps still
    missing are run (two first opens of a fresh folder would otherwise both create its tables)."""
    if version == target:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version >= target:  # done by another opener meanwhile
            db.execute("ROLLBACK")
            return
        for step in range(version, target):
            steps[step](db)
        db.execute(f"PRAGMA user_version = {int(target)}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def wal_mode(db: sqlite3.Connection, timeout_s: float) -> str:
    """Put the file in WAL mode and return the mode it is in. Switching needs the file to itself, and SQLite
    answers "database is locked" at once, without waiting its busy timeout, while another connection opening
    the same fresh file holds it: tried again until ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        try:
            return str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in english_error(exc).lower() or time.monotonic() >= deadline:
                raise
        time.sleep(delay)  # a few ms: the other opener's switch or migration is that short
        delay = min(delay * 2, 0.05)


@contextmanager
def write_transaction(db: sqlite3.Connection, lock: threading.Lock | threading.RLock) -> Iterator[sqlite3.Connection]:
    """One writer at a time in this process, and the file locked for writing from the first statement (BEGIN
    IMMEDIATE), so another process's write waits instead of failing half-way; rolled back on any error."""
    with lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
