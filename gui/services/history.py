"""Chat history in a SQLite file, so conversations survive a restart (or an engine crash).

One file under the user data directory, in WAL mode: a write never blocks a reader, and a crash
mid-write leaves the last committed state intact. Every turn is stored with the model file, load
settings, sampling and stats it was generated with, so a transcript can be explained later.

Threading: one connection opened with ``check_same_thread=False`` and every method holding one lock.
An sqlite3 connection must not be used by two threads at once; the lock makes each method atomic, and
the statements are small (a streamed reply updates one row), so the UI thread never waits long for the
writer. One connection also keeps close() simple: there are no per-thread connections to hunt down.

Opening never stops the window. A file SQLite cannot read is moved aside as ``<name>.corrupt-<timestamp>``
(never deleted: the user may want to recover it) and a fresh database is started. A path that cannot be
opened at all (a folder in its place, no permission, a read-only disk, locked by another process past the
busy timeout, written by a newer Tightfit) is left as it is, and the history lives in memory for this
session (``persistent`` is False). Either way ``HistoryStore.warning`` says what happened, in words.

Two windows, one history. Two Tightfit windows (or a window and a script) may write the same
conversation: both restored the last one at start, say. A save therefore merges rather than replaces.
Every turn has a uid (``Turn.uid``), and a writer saves against its *base*, its copy as it last loaded
or saved it (:class:`ConversationCopy` keeps it). A turn new since the base is added after every stored
turn; one changed since it is written; one in the base but gone from the writer's copy was removed by
its user (edit, regenerate, drop the oldest turns) and is deleted. Every other stored turn was added,
changed or removed by another writer and is left as the store has it: a writer cannot delete a turn it
never saw. The other choice, one window at a time behind a lock, was not taken: the command line and
scripts open the history too, a user who opens a second window expects it to work, and a lock left by a
crashed window would shut the history until someone removed it by hand.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import json
import logging
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from gui.core.chat import Conversation, Turn
from gui.core.protocol import ReplyStats
from gui.core.words import Text, english_error, message_of, words
from gui.services.sqlite_schema import migrate, wal_mode, write_transaction

__all__ = [
    "SCHEMA_VERSION",
    "ConversationCopy",
    "ConversationSummary",
    "HistoryError",
    "HistoryStore",
    "SearchHit",
    "StoredConversation",
    "default_history_path",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2


def default_history_path() -> Path:
    return Path(user_data_dir("tightfit")) / "history.sqlite3"


class HistoryError(Exception):
    pass


class _Corrupt(sqlite3.DatabaseError):
    pass


# SQLite's primary result codes for a damaged file or one that is not a database at all. Anything
# else (locked, busy, read-only, cannot open) says nothing about the file and must not move it.
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _is_corruption(error: sqlite3.DatabaseError) -> bool:
    if isinstance(error, _Corrupt):
        return True
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


@dataclass(frozen=True)
class ConversationSummary:
    id: int
    title: str
    created: float  # Unix time
    updated: float
    n_turns: int


@dataclass
class StoredConversation:
    id: int
    title: str
    system_prompt: str
    created: float
    updated: float
    turns: list[Turn] = field(default_factory=list)

    def to_conversation(self) -> Conversation:
        return Conversation(self.system_prompt, list(self.turns))


@dataclass(frozen=True)
class SearchHit:
    conversation_id: int
    title: str
    snippet: str  # plain text around the first match


# ---- schema -------------------------------------------------------------------------------------

_SCHEMA_V1 = """
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    system_prompt TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX conversations_by_updated ON conversations (updated DESC, id DESC);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    model_file TEXT NOT NULL DEFAULT '',
    settings TEXT,
    sampling TEXT,
    stats TEXT,
    created REAL NOT NULL,
    UNIQUE (conversation_id, position)
);
CREATE TABLE app_state (key TEXT PRIMARY KEY, value TEXT);
"""

# Full-text index over message text, kept in step by triggers. It is optional: an SQLite built without
# FTS5 falls back to LIKE, and the triggers are dropped so writes still work on such a build.
_FTS_TABLE = "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(text, content='messages', content_rowid='id')"
_FTS_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END""",
    """CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text); END""",
    """CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF text ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END""",
)
_FTS_TRIGGER_NAMES = ("messages_fts_insert", "messages_fts_delete", "messages_fts_update")


# MIGRATIONS[n] upgrades a database at version n to n + 1, inside the opening transaction.
# Add an entry (and bump SCHEMA_VERSION) for every schema change; never edit a released one.
def _create_v1(db: sqlite3.Connection) -> None:
    # Statement by statement: executescript() would COMMIT first and break the migration's atomicity.
    for statement in _SCHEMA_V1.split(";"):
        if statement.strip():
            db.execute(statement)


def _add_turn_uids(db: sqlite3.Connection) -> None:
    # Turns written before uids existed get random ones: no other writer can know them.
    db.execute("ALTER TABLE messages ADD COLUMN uid TEXT NOT NULL DEFAULT ''")
    db.execute("UPDATE messages SET uid = lower(hex(randomblob(16)))")
    db.execute("CREATE UNIQUE INDEX messages_by_uid ON messages (conversation_id, uid)")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _create_v1, 1: _add_turn_uids}

_MESSAGE_COLUMNS = ("role", "text", "note", "model_file", "settings", "sampling", "stats")
_STATS_FIELDS = tuple(f.name for f in fields(ReplyStats))


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))


def _turn_row(turn: Turn) -> tuple[Any, ...]:
    stats = asdict(turn.stats) if turn.stats is not None else None
    return (
        turn.role,
        turn.text,
        turn.note,
        turn.model_file,
        _dumps(turn.settings),
        _dumps(turn.sampling),
        _dumps(stats),
    )


def _row_turn(row: sqlite3.Row) -> Turn:
    stats: ReplyStats | None = None
    if row["stats"]:
        data = json.loads(row["stats"])
        try:
            stats = ReplyStats(**{k: data[k] for k in _STATS_FIELDS})
        except (KeyError, TypeError):
            stats = None  # written by another version with different fields: show the turn without figures
    return Turn(
        role=row["role"],
        text=row["text"],
        stats=stats,
        note=row["note"],
        model_file=row["model_file"],
        settings=json.loads(row["settings"]) if row["settings"] else None,
        sampling=json.loads(row["sampling"]) if row["sampling"] else None,
        uid=row["uid"],
    )


class HistoryStore:
    def __init__(
        self, path: str | Path | None = None, *, use_fts: bool | None = None, busy_timeout_s: float = 10.0
    ) -> None:
        """Open (or create) the history at ``path``; the default is under the user data directory.

        ``use_fts``: None uses FTS5 when this SQLite has it; False forces the LIKE search (tests, and
        a way out should the index ever misbehave). ``busy_timeout_s``: how long to wait for another
        process (a second window) holding the write lock; past it a write raises sqlite3.OperationalError,
        and an opening falls back to a history in memory.
        """
        self.path = Path(path) if path is not None else default_history_path()
        self.warning: Text | None = None
        self.persistent = True  # False: the file could not be used, this session's chats live in memory
        self._lock = threading.RLock()
        self._busy_timeout_s = busy_timeout_s
        try:
            self.fts = self._open_file(use_fts)
        except (HistoryError, sqlite3.Error, OSError) as e:
            if isinstance(e, HistoryError):
                reason = message_of(e)
            elif isinstance(e, OSError):
                reason = f"{e.filename or self.path}: {e.strerror or english_error(e)}"
            else:
                reason = words("the chat history at {path} cannot be opened: {error}", path=self.path, error=e)
            self.warning = words(
                "Chat history is off for this session: {reason}. Nothing was changed on disk; this "
                "session's chats are kept until Tightfit closes.",
                reason=reason,
            )
            log.warning("%s", self.warning)
            self.persistent = False
            self._db = self._open(":memory:")
            self.fts = self._setup_fts(use_fts)

    # -- opening ---------------------------------------------------------------------------------

    def _open_file(self, use_fts: bool | None) -> bool:
        """Open ``path`` (a fresh database if the old one is damaged: moved aside, with a warning) and set
        up search; returns whether full-text search is on."""
        with contextlib.suppress(FileNotFoundError):
            mode = self.path.stat().st_mode
            if not stat.S_ISREG(mode):  # a FIFO would hang the first read, a folder fails in vaguer words
                kind = words("a folder") if stat.S_ISDIR(mode) else words("a special file")
                raise HistoryError(words("{path} is {kind}, not a database file", path=self.path, kind=kind))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open(self.path)
        except sqlite3.DatabaseError as e:
            if not _is_corruption(e):
                raise
            moved = self._move_aside()
            self.warning = words(
                "The chat history could not be read ({error}); it was moved to {name} and a new one started.",
                error=e,
                name=moved.name,
            )
            log.warning("%s", self.warning)
            self._db = self._open(self.path)
        try:
            return self._setup_fts(use_fts)
        except BaseException:
            self._db.close()
            raise

    def _open(self, target: Path | str) -> sqlite3.Connection:
        db = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=self._busy_timeout_s)
        try:
            db.row_factory = sqlite3.Row
            # quick_check reads every page: for a history of a few MB that is milliseconds, and it is the
            # only way to notice damage before a query hits it mid-conversation.
            result = db.execute("PRAGMA quick_check").fetchone()[0]
            if result != "ok":
                raise _Corrupt(f"integrity check failed: {result}")
            mode = wal_mode(db, self._busy_timeout_s)
            if str(mode).lower() not in ("wal", "memory"):
                log.warning("history database is in %s mode, not WAL", mode)
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a power cut loses at most the last write
            db.execute("PRAGMA foreign_keys=ON")
            self._migrate(db)
            # A read-only file opens and reads; find out now, while there is a fallback, not at the first save.
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            finally:
                db.execute("ROLLBACK")
        except BaseException:
            db.close()
            raise
        return db

    def _migrate(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryError(
                words(
                    "the chat history at {path} was written by a newer Tightfit (schema {version}, "
                    "this one knows {known}); update Tightfit to open it",
                    path=self.path,
                    version=version,
                    known=SCHEMA_VERSION,
                )
            )
        migrate(db, version, SCHEMA_VERSION, MIGRATIONS)

    def _move_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        self.path.rename(target)
        # The WAL and shared-memory files belong to the damaged database, not to the fresh one.
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.rename(target.with_name(target.name + suffix))
        return target

    def _setup_fts(self, use_fts: bool | None) -> bool:
        with self._lock:
            has_table = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts'"
            ).fetchone()
            if use_fts is not False:
                try:
                    with self._write():
                        self._db.execute(_FTS_TABLE)
                        missing = [
                            name
                            for name in _FTS_TRIGGER_NAMES
                            if not self._db.execute(
                                "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
                            ).fetchone()
                        ]
                        for sql in _FTS_TRIGGERS:
                            self._db.execute(sql)
                        if missing and has_table:
                            # Written without the triggers (by a build with no FTS5): the index is stale.
                            self._db.execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')")
                        elif not has_table:
                            self._db.execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')")
                    return True
                except sqlite3.OperationalError as e:
                    if "fts5" not in message_of(e).lower():
                        raise  # locked, read-only, ...: not about full-text search
                    log.info("full-text search unavailable (%s); searching with LIKE", e)
            with self._write():
                for name in _FTS_TRIGGER_NAMES:
                    self._db.execute(f"DROP TRIGGER IF EXISTS {name}")
            return False

    # -- plumbing --------------------------------------------------------------------------------

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._db, self._lock)

    def _require(self, conversation_id: int) -> None:
        if not self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone():
            raise KeyError(f"no conversation {conversation_id} in the history")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- conversations ---------------------------------------------------------------------------

    def create(self, title: str, system_prompt: str = "") -> int:
        now = time.time()
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO conversations (title, system_prompt, created, updated) VALUES (?, ?, ?, ?)",
                (title, system_prompt, now, now),
            )
            assert cur.lastrowid is not None
            return cur.lastrowid

    def list(self, limit: int = 100, offset: int = 0) -> builtins.list[ConversationSummary]:
        """Conversations, most recently changed first."""
        with self._lock:
            rows = self._db.execute(
                """SELECT c.id, c.title, c.created, c.updated,
                          (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS n_turns
                   FROM conversations c ORDER BY c.updated DESC, c.id DESC LIMIT ? OFFSET ?""",
                (limit, offset),
            ).fetchall()
        return [ConversationSummary(r["id"], r["title"], r["created"], r["updated"], r["n_turns"]) for r in rows]

    def load(self, conversation_id: int) -> StoredConversation:
        with self._lock:
            head = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            if head is None:
                raise KeyError(f"no conversation {conversation_id} in the history")
            rows = self._db.execute(
                "SELECT * FROM messages WHERE conversation_id = ? ORDER BY position", (conversation_id,)
            ).fetchall()
        return StoredConversation(
            head["id"],
            head["title"],
            head["system_prompt"],
            head["created"],
            head["updated"],
            [_row_turn(r) for r in rows],
        )

    def save(self, conversation_id: int, conversation: Conversation, base: Conversation | None = None) -> None:
        """Merge one writer's copy of a conversation into the stored one, writing only what differs.

        ``base`` is that copy as the writer last loaded or saved it (None: it has seen nothing stored, so
        nothing is deleted). A turn new or changed since ``base`` is written (a new one after every stored
        turn); a turn in ``base`` but not in ``conversation`` is deleted; any other stored turn is another
        writer's and stays as it is. The system prompt is written when it changed since ``base``.
        Saving an unchanged conversation writes nothing (and leaves ``updated`` alone, so the list order
        only changes when a conversation does).
        """
        rows = {t.uid: _turn_row(t) for t in conversation.turns}
        known = {t.uid: _turn_row(t) for t in base.turns} if base is not None else {}
        with self._write() as db:
            head = db.execute("SELECT system_prompt FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            if head is None:
                raise KeyError(f"no conversation {conversation_id} in the history")
            stored = {
                r["uid"]: tuple(r[c] for c in _MESSAGE_COLUMNS)
                for r in db.execute(
                    f"SELECT uid, {', '.join(_MESSAGE_COLUMNS)} FROM messages WHERE conversation_id = ?",
                    (conversation_id,),
                )
            }
            end = self._end(conversation_id)
            now = time.time()
            changed = False
            for uid, row in rows.items():
                if known.get(uid) == row or stored.get(uid) == row:
                    continue  # not changed by this writer, or already stored as it is
                if uid in stored:
                    self._update(db, conversation_id, uid, row)
                else:  # new here, or changed here after another writer removed it
                    self._insert(db, conversation_id, end, uid, row, now)
                    end += 1
                changed = True
            for uid in known.keys() - rows.keys():
                cur = db.execute("DELETE FROM messages WHERE conversation_id = ? AND uid = ?", (conversation_id, uid))
                changed = changed or cur.rowcount > 0
            prompt = conversation.system_prompt
            if prompt != head["system_prompt"] and (base is None or prompt != base.system_prompt):
                db.execute("UPDATE conversations SET system_prompt = ? WHERE id = ?", (prompt, conversation_id))
                changed = True
            if changed:
                db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (now, conversation_id))

    def append_turn(self, conversation_id: int, turn: Turn) -> int:
        """Add ``turn`` after the last one; returns its position (0-based)."""
        with self._write() as db:
            self._require(conversation_id)
            position = self._end(conversation_id)
            now = time.time()
            self._insert(db, conversation_id, position, turn.uid, _turn_row(turn), now)
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (now, conversation_id))
            return position

    def update_last_turn(self, conversation_id: int, turn: Turn) -> None:
        """Overwrite the last turn's content (it keeps its uid): the cheap path while a reply streams in."""
        with self._write() as db:
            last = db.execute(
                "SELECT uid FROM messages WHERE conversation_id = ? ORDER BY position DESC LIMIT 1", (conversation_id,)
            ).fetchone()
            if last is None:
                raise KeyError(f"conversation {conversation_id} has no turn to update")
            self._update(db, conversation_id, last["uid"], _turn_row(turn))
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), conversation_id))

    def _end(self, conversation_id: int) -> int:
        """The position after the conversation's last turn."""
        return int(
            self._db.execute(
                "SELECT coalesce(max(position) + 1, 0) FROM messages WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()[0]
        )

    @staticmethod
    def _insert(
        db: sqlite3.Connection, conversation_id: int, position: int, uid: str, row: tuple[Any, ...], now: float
    ) -> None:
        db.execute(
            f"""INSERT INTO messages (conversation_id, position, uid, {", ".join(_MESSAGE_COLUMNS)}, created)
                VALUES (?, ?, ?, {", ".join("?" for _ in _MESSAGE_COLUMNS)}, ?)""",
            (conversation_id, position, uid, *row, now),
        )

    @staticmethod
    def _update(db: sqlite3.Connection, conversation_id: int, uid: str, row: tuple[Any, ...]) -> None:
        db.execute(
            f"""UPDATE messages SET {", ".join(f"{c} = ?" for c in _MESSAGE_COLUMNS)}
                WHERE conversation_id = ? AND uid = ?""",
            (*row, conversation_id, uid),
        )

    def rename(self, conversation_id: int, title: str) -> None:
        with self._write() as db:
            self._require(conversation_id)
            db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))

    def delete(self, conversation_id: int) -> None:
        with self._write() as db:
            # Explicit rather than relying on ON DELETE CASCADE, so the FTS delete trigger runs per row.
            db.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            db.execute("DELETE FROM app_state WHERE key = 'last_opened' AND value = ?", (str(conversation_id),))

    # -- search ----------------------------------------------------------------------------------

    def search(self, text: str, limit: int = 50) -> builtins.list[SearchHit]:
        """Conversations whose title or messages contain every word of ``text``; one hit per conversation."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        hits: dict[int, SearchHit] = {}
        with self._lock:
            like = "%" + _escape_like(text.strip()) + "%"
            for r in self._db.execute(
                "SELECT id, title FROM conversations WHERE title LIKE ? ESCAPE '\\' ORDER BY updated DESC LIMIT ?",
                (like, limit),
            ):
                hits[r["id"]] = SearchHit(r["id"], r["title"], r["title"])
            rows = self._search_fts(words, limit) if self.fts else self._search_like(words, limit)
        passages: set[int] = set()
        for conversation_id, title, message in rows:
            # The passage that matched, even when the title matched too: it is what the user looks for.
            if conversation_id not in passages and (conversation_id in hits or len(hits) < limit):
                hits[conversation_id] = SearchHit(conversation_id, title, _snippet(message, words))
                passages.add(conversation_id)
        return builtins.list(hits.values())

    def _search_fts(self, words: builtins.list[str], limit: int) -> builtins.list[tuple[int, str, str]]:
        # Each word quoted (so FTS syntax in the text is inert); the last one as a prefix, for search-as-you-type.
        query = " ".join(f'"{w}"' for w in words[:-1]) + f' "{words[-1]}"*'
        rows = self._db.execute(
            """SELECT m.conversation_id, c.title, m.text FROM messages_fts
               JOIN messages m ON m.id = messages_fts.rowid
               JOIN conversations c ON c.id = m.conversation_id
               WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?""",
            (query.strip(), limit * 4),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def _search_like(self, words: builtins.list[str], limit: int) -> builtins.list[tuple[int, str, str]]:
        where = " AND ".join("m.text LIKE ? ESCAPE '\\'" for _ in words)
        rows = self._db.execute(
            f"""SELECT m.conversation_id, c.title, m.text FROM messages m
                JOIN conversations c ON c.id = m.conversation_id
                WHERE {where} ORDER BY c.updated DESC, m.position LIMIT ?""",
            (*("%" + _escape_like(w) + "%" for w in words), limit * 4),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    # -- app state -------------------------------------------------------------------------------

    def last_opened(self) -> int | None:
        """The conversation open when the app last closed, if it still exists."""
        with self._lock:
            row = self._db.execute(
                """SELECT c.id FROM app_state s JOIN conversations c ON c.id = CAST(s.value AS INTEGER)
                   WHERE s.key = 'last_opened'"""
            ).fetchone()
        return int(row[0]) if row else None

    def set_last_opened(self, conversation_id: int | None) -> None:
        with self._write() as db:
            if conversation_id is None:
                db.execute("DELETE FROM app_state WHERE key = 'last_opened'")
            else:
                db.execute(
                    "INSERT INTO app_state (key, value) VALUES ('last_opened', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(conversation_id),),
                )


class ConversationCopy:
    """One writer's copy of a stored conversation (a window's chat, a script): which stored conversation it
    is, and its base, the conversation as this writer last loaded or saved it, so that its saves merge with
    other writers' rather than overwrite them (see the module docstring).

    Not thread-safe: one writer saves from one thread (the window's history thread).
    """

    def __init__(self, store: HistoryStore, conversation_id: int | None = None, base: Conversation | None = None):
        """``base``: the conversation as loaded (copied here, so the caller may go on changing its own)."""
        self.store = store
        self.id = conversation_id
        self._base = copy.deepcopy(base)

    @classmethod
    def open(cls, store: HistoryStore, conversation_id: int) -> tuple[ConversationCopy, Conversation]:
        """A copy of a stored conversation, and the conversation for the writer to work on."""
        conversation = store.load(conversation_id).to_conversation()
        return cls(store, conversation_id, conversation), conversation

    def save(self, conversation: Conversation, title: str) -> bool:
        """Store ``conversation``, which becomes the base: pass a snapshot the caller will not change.

        The first save creates the stored conversation titled ``title``; so does a save with changes
        after another writer deleted it, since this writer's user is still working on it (an unchanged
        copy does not bring a deleted conversation back). Returns whether a stored conversation was created.
        """
        if self._base is not None and _same(conversation, self._base):
            return False
        created = False
        if self.id is not None:
            try:
                self.store.save(self.id, conversation, self._base)
            except KeyError:
                self.id = None
        if self.id is None:
            self.id = self.store.create(title, conversation.system_prompt)
            self.store.save(self.id, conversation)
            created = True
        self._base = conversation
        return created


def _same(a: Conversation, b: Conversation) -> bool:
    def stored_form(c: Conversation) -> tuple[str, list[tuple[str, tuple[Any, ...]]]]:
        return c.system_prompt, [(t.uid, _turn_row(t)) for t in c.turns]

    return stored_form(a) == stored_form(b)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _snippet(text: str, words: builtins.list[str], width: int = 120) -> str:
    """Plain text around the first word found, on one line, with ellipses where it was cut; the word is
    near the start, so a narrow list still shows it."""
    flat = " ".join(text.split())
    low = flat.lower()
    found = [i for i in (low.find(w.lower()) for w in words) if i >= 0]
    at = min(found) if found else 0
    start = max(0, at - 16)
    if start:  # begin at a word, not inside one
        space = flat.find(" ", start, at)
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + width)
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")
