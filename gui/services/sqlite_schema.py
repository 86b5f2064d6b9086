"""Schema versions of Tightfit's SQLite files (chat history, journey): PRAGMA user_version, stepped forward
by a list of migrations in one transaction, so a file is either migrated whole or left as it was."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping

__all__ = ["migrate"]


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
