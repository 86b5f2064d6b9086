"""The journey's records in SQLite: every load, every reply's speed and every benchmark row, with a note
per configuration (gui/core/journey.py groups them into the staged table).

Its own file, ``journey.sqlite3``, in the chat history's directory rather than tables in the history's
database: each file has its own schema version, so a journey written by a newer Tightfit (or a damaged
one) turns off only the journey, never the chats, and the reverse; ``tightfit bench`` and
``tightfit journey`` open it without touching the conversations; and pruning the journey (it is bounded)
never rewrites the chat database.

WAL mode, one connection used under one lock (``check_same_thread=False``), as the history does: a writer
on a background thread and a reader on another never use the connection at once, and every statement is
small. Bounded: past :data:`LIMITS` rows a table drops its oldest rows as new ones come.

Opening never stops the window or a command. A file that cannot be used (damaged, not a database, written
by a newer Tightfit, a folder in its place, read-only, locked past the busy timeout) is left exactly as it
is; the journey lives in memory for this session (``persistent`` is False) and ``warning`` says why and
what to do, in words.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import stat
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from gui.core.journey import BenchRecord, BuildInfo, JourneyData, LoadRecord, ReplyRecord
from gui.core.words import Text, english_error, message_of, words
from gui.services.history import default_history_path
from gui.services.sqlite_schema import migrate, wal_mode, write_transaction

__all__ = ["LIMITS", "SCHEMA_VERSION", "JourneyError", "JourneyStore", "default_journey_path"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
# Rows kept per table; the oldest go first. A reply row is ~100 bytes: the whole file stays a few MB.
LIMITS: Mapping[str, int] = {"loads": 5_000, "replies": 20_000, "bench_rows": 20_000, "notes": 5_000}

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def default_journey_path() -> Path:
    """Beside the chat history, in the user data directory."""
    return default_history_path().with_name("journey.sqlite3")


class JourneyError(Exception):
    pass


_SCHEMA_V1 = """
CREATE TABLE loads (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    time REAL NOT NULL,
    model_path TEXT NOT NULL,
    model_name TEXT NOT NULL,
    settings TEXT NOT NULL,
    backend TEXT NOT NULL,
    llama_cpp_python TEXT NOT NULL,
    cuda_archs TEXT NOT NULL,
    gpu_offload INTEGER NOT NULL,
    card TEXT NOT NULL,
    load_ms REAL NOT NULL,
    layers_on_gpu INTEGER NOT NULL,
    n_layer INTEGER NOT NULL,
    ceiling_tok_s REAL
);
CREATE TABLE replies (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    load_uid TEXT NOT NULL,
    n_prompt INTEGER NOT NULL,
    n_prompt_evaluated INTEGER NOT NULL,
    n_gen INTEGER NOT NULL,
    prompt_tok_s REAL NOT NULL,
    decode_tok_s REAL NOT NULL,
    ceiling_tok_s REAL
);
CREATE INDEX replies_by_load ON replies (load_uid);
CREATE TABLE bench_rows (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    model_path TEXT NOT NULL,
    model_name TEXT NOT NULL,
    test TEXT NOT NULL,
    n_prompt INTEGER NOT NULL,
    n_gen INTEGER NOT NULL,
    n_depth INTEGER NOT NULL,
    avg_ts REAL NOT NULL,
    stddev_ts REAL NOT NULL,
    settings TEXT NOT NULL,
    backend TEXT NOT NULL,
    llama_cpp_python TEXT NOT NULL,
    cuda_archs TEXT NOT NULL,
    gpu_offload INTEGER NOT NULL,
    card TEXT NOT NULL,
    ceiling_tok_s REAL,
    n_layer INTEGER,
    row TEXT NOT NULL
);
CREATE TABLE notes (
    config_key TEXT PRIMARY KEY,
    note TEXT NOT NULL,
    updated REAL NOT NULL
);
"""


def _create_v1(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA_V1.split(";"):
        if statement.strip():
            db.execute(statement)


# MIGRATIONS[n] upgrades a database at version n to n + 1, inside the opening transaction. Add an entry
# (and bump SCHEMA_VERSION) for every schema change; never edit a released one.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _create_v1}


def _is_corruption(error: sqlite3.DatabaseError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _archs(build: BuildInfo) -> str:
    return ",".join(str(a) for a in build.cuda_archs)


def _build(row: sqlite3.Row) -> BuildInfo:
    return BuildInfo.from_mapping(
        {
            "backend": row["backend"],
            "llama_cpp_python": row["llama_cpp_python"],
            "cuda_archs": row["cuda_archs"],
            "gpu_offload": bool(row["gpu_offload"]),
        }
    )


def _json_object(text: str | None) -> dict[str, Any]:
    """A stored JSON object; anything else (a hand-edited row) reads as empty rather than failing the table."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _dumps(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), sort_keys=True, separators=(",", ":"), default=str)


class JourneyStore:
    def __init__(
        self,
        path: str | Path | None = None,
        *,
        busy_timeout_s: float = 10.0,
        limits: Mapping[str, int] | None = None,
    ) -> None:
        """Open (or create) the journey at ``path`` (default: beside the chat history). Never raises for a
        file it cannot use: see the module docstring."""
        self.path = Path(path) if path is not None else default_journey_path()
        self.limits = {**LIMITS, **(limits or {})}
        self.warning: Text | None = None
        self.persistent = True
        self._lock = threading.RLock()
        self._busy_timeout_s = busy_timeout_s
        try:
            self._db = self._open_file()
        except (JourneyError, sqlite3.Error, OSError) as e:
            if isinstance(e, JourneyError):
                reason = message_of(e)
            elif isinstance(e, OSError):
                reason = f"{e.filename or self.path}: {e.strerror or english_error(e)}"
            elif isinstance(e, sqlite3.DatabaseError) and _is_corruption(e):
                reason = words(
                    "{path} cannot be read ({error}); move it away to start a new journey", path=self.path, error=e
                )
            else:
                reason = words("{path} cannot be opened: {error}", path=self.path, error=e)
            self.warning = words(
                "The journey is not saved this session: {reason}. The file was left as it is; this session's "
                "loads, replies and benchmarks are kept until Tightfit closes.",
                reason=reason,
            )
            log.warning("%s", self.warning)
            self.persistent = False
            self._db = self._connect(":memory:")
            self._migrate(self._db)

    # -- opening ---------------------------------------------------------------------------------

    def _open_file(self) -> sqlite3.Connection:
        with contextlib.suppress(FileNotFoundError):
            mode = self.path.stat().st_mode
            if not stat.S_ISREG(mode):  # a FIFO would hang the first read
                kind = words("a folder") if stat.S_ISDIR(mode) else words("a special file")
                raise JourneyError(words("{path} is {kind}, not a database file", path=self.path, kind=kind))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._connect(self.path)
        try:
            result = db.execute("PRAGMA quick_check").fetchone()[0]
            if result != "ok":
                raise JourneyError(
                    words(
                        "{path} is damaged ({result}); move it away to start a new journey",
                        path=self.path,
                        result=result,
                    )
                )
            # Before anything that could write (WAL mode, a migration): a newer file is not touched.
            self._check_version(db)
            journal = wal_mode(db, self._busy_timeout_s)
            if journal.lower() != "wal":
                log.warning("journey database is in %s mode, not WAL", journal)
            db.execute("PRAGMA synchronous=NORMAL")
            self._migrate(db)
            # A read-only file opens and reads: find out now, while there is a fallback, not at the first write.
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        except BaseException:
            db.close()
            raise
        return db

    def _connect(self, target: Path | str) -> sqlite3.Connection:
        db = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=self._busy_timeout_s)
        db.row_factory = sqlite3.Row
        return db

    def _check_version(self, db: sqlite3.Connection) -> int:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise JourneyError(
                words(
                    "{path} was written by a newer Tightfit (schema {version}, this one knows {known}); "
                    "update Tightfit to use it",
                    path=self.path,
                    version=version,
                    known=SCHEMA_VERSION,
                )
            )
        return version

    def _migrate(self, db: sqlite3.Connection) -> None:
        migrate(db, self._check_version(db), SCHEMA_VERSION, MIGRATIONS)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._db, self._lock)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> JourneyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------------

    def add_load(self, load: LoadRecord) -> None:
        with self._write() as db:
            db.execute(
                """INSERT OR IGNORE INTO loads (uid, time, model_path, model_name, settings, backend,
                       llama_cpp_python, cuda_archs, gpu_offload, card, load_ms, layers_on_gpu, n_layer, ceiling_tok_s)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    load.uid,
                    load.time,
                    load.model_path,
                    load.model_name,
                    _dumps(load.settings),
                    load.build.backend,
                    load.build.llama_cpp_python,
                    _archs(load.build),
                    int(load.build.gpu_offload),
                    load.card,
                    load.load_ms,
                    load.layers_on_gpu,
                    load.n_layer,
                    load.ceiling_tok_s,
                ),
            )
            if self._prune(db, "loads"):
                # A reply without its load belongs to no configuration: it goes with it.
                db.execute("DELETE FROM replies WHERE load_uid NOT IN (SELECT uid FROM loads)")

    def add_reply(self, reply: ReplyRecord) -> None:
        with self._write() as db:
            db.execute(
                """INSERT INTO replies (time, load_uid, n_prompt, n_prompt_evaluated, n_gen, prompt_tok_s,
                       decode_tok_s, ceiling_tok_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    reply.time,
                    reply.load_uid,
                    reply.n_prompt,
                    reply.n_prompt_evaluated,
                    reply.n_gen,
                    reply.prompt_tok_s,
                    reply.decode_tok_s,
                    reply.ceiling_tok_s,
                ),
            )
            self._prune(db, "replies")

    def add_bench_row(self, row: BenchRecord) -> None:
        with self._write() as db:
            db.execute(
                """INSERT INTO bench_rows (time, model_path, model_name, test, n_prompt, n_gen, n_depth, avg_ts,
                       stddev_ts, settings, backend, llama_cpp_python, cuda_archs, gpu_offload, card, ceiling_tok_s,
                       n_layer, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    row.time,
                    row.model_path,
                    row.model_name,
                    row.test,
                    row.n_prompt,
                    row.n_gen,
                    row.n_depth,
                    row.avg_ts,
                    row.stddev_ts,
                    _dumps(row.settings),
                    row.build.backend,
                    row.build.llama_cpp_python,
                    _archs(row.build),
                    int(row.build.gpu_offload),
                    row.card,
                    row.ceiling_tok_s,
                    row.n_layer,
                    _dumps(row.row),
                ),
            )
            self._prune(db, "bench_rows")

    def set_note(self, config_key: str, note: str, *, now: float) -> None:
        """The user's note on a configuration; an empty one removes it."""
        with self._write() as db:
            if note.strip():
                db.execute(
                    """INSERT INTO notes (config_key, note, updated) VALUES (?, ?, ?)
                       ON CONFLICT (config_key) DO UPDATE SET note = excluded.note, updated = excluded.updated""",
                    (config_key, note, now),
                )
                self._prune(db, "notes", order="updated")
            else:
                db.execute("DELETE FROM notes WHERE config_key = ?", (config_key,))

    def _prune(self, db: sqlite3.Connection, table: str, order: str = "id") -> bool:
        """Keep the newest ``limits[table]`` rows; whether any went."""
        if order == "id":
            # Rows get ascending ids: one index look-up, whatever the table's size.
            sql = f"DELETE FROM {table} WHERE id <= (SELECT max(id) FROM {table}) - ?"
        else:
            newest = f"SELECT rowid FROM {table} ORDER BY {order} DESC LIMIT -1 OFFSET ?"
            sql = f"DELETE FROM {table} WHERE rowid IN ({newest})"
        return db.execute(sql, (self.limits[table],)).rowcount > 0

    # -- reading ---------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {t: int(self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in LIMITS}

    def notes(self) -> dict[str, str]:
        with self._lock:
            return {r["config_key"]: r["note"] for r in self._db.execute("SELECT config_key, note FROM notes")}

    def snapshot(self) -> JourneyData:
        """Everything stored, oldest first (bounded by the limits)."""
        with self._lock:
            loads = self._db.execute("SELECT * FROM loads ORDER BY time, id").fetchall()
            replies = self._db.execute("SELECT * FROM replies ORDER BY time, id").fetchall()
            bench = self._db.execute("SELECT * FROM bench_rows ORDER BY time, id").fetchall()
            notes = self.notes()
        return JourneyData(
            loads=[
                LoadRecord(
                    uid=r["uid"],
                    time=r["time"],
                    model_path=r["model_path"],
                    model_name=r["model_name"],
                    settings=_json_object(r["settings"]),
                    build=_build(r),
                    card=r["card"],
                    load_ms=r["load_ms"],
                    layers_on_gpu=r["layers_on_gpu"],
                    n_layer=r["n_layer"],
                    ceiling_tok_s=r["ceiling_tok_s"],
                )
                for r in loads
            ],
            replies=[
                ReplyRecord(
                    time=r["time"],
                    load_uid=r["load_uid"],
                    n_prompt=r["n_prompt"],
                    n_prompt_evaluated=r["n_prompt_evaluated"],
                    n_gen=r["n_gen"],
                    prompt_tok_s=r["prompt_tok_s"],
                    decode_tok_s=r["decode_tok_s"],
                    ceiling_tok_s=r["ceiling_tok_s"],
                )
                for r in replies
            ],
            bench=[
                BenchRecord(
                    time=r["time"],
                    model_path=r["model_path"],
                    model_name=r["model_name"],
                    test=r["test"],
                    n_prompt=r["n_prompt"],
                    n_gen=r["n_gen"],
                    n_depth=r["n_depth"],
                    avg_ts=r["avg_ts"],
                    stddev_ts=r["stddev_ts"],
                    settings=_json_object(r["settings"]),
                    build=_build(r),
                    card=r["card"],
                    ceiling_tok_s=r["ceiling_tok_s"],
                    n_layer=r["n_layer"],
                    row=_json_object(r["row"]),
                )
                for r in bench
            ],
            notes=notes,
        )
