"""What Tightfit's SQLite files (chat history, journey) share: schema versions in PRAGMA user_version, stepped
forward by a list of migrations in one transaction, so a file is either migrated whole or left as it was; and
writes as one immediate transaction under the store's lock."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

__all__ = ["migrate", "write_transaction"]


def migrate(
    db: sqlite3.Connection, version: int, target: int, steps: Mapping[int, Callable[[sqlite3.Connection], None]]
) -> None:
    """Run ``steps[version]`` up to ``steps[target - 1]`` (each takes the file one version on) and set the
    version to ``target``, all or nothing."""
    if version == target:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, target):
            steps[step](db)
        db.execute(f"PRAGMA user_version = {int(target)}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


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
