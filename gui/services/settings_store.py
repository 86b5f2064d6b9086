"""A small JSON settings file under the user's config directory.

Writes are atomic (a temporary file in the same directory, flushed, then renamed over the old one), so
a crash or a full disk never leaves a half-written file; a settings file that is a symlink stays one, and the
file it points to gets the content. Losing preferences is better than refusing to
start, so nothing in the file stops the window:

- content that is not a JSON object, is larger than ``MAX_BYTES``, is nested deeper than ``MAX_DEPTH``
  (Python's json would hit its recursion limit, or a later copy would) or names no schema version this
  code can read is set aside beside it as ``settings.json.<date>-<time>.bad`` for the user to inspect, and
  the defaults are used; ``warning`` says so in one line the window can show;
- a path that cannot be read as a regular file (a directory, a FIFO, no permission, a symlink loop) is
  logged and left alone: the defaults are used, and this session's changes stay in memory rather than
  replace a file that was never read;
- a write the disk refuses (full, read-only) is logged, and ``write_error`` says why; the new value still
  holds for this session;
- a single bad value (NaN, an out-of-range or absurd number, a NUL in text, a wrong type) is dropped by
  its declaration's parser (``gui.core.preferences``) when read, and the default is used.

The window's store writes behind (``write_behind=True``): a change is seen by every read at once and the
caller goes on; one background thread writes the file (the same atomic write, fsync included), at most once
per ``delay_s`` however many changes came in that time, the newest values winning. ``flush()`` writes what
is pending and waits for it (bounded); the window calls it as it closes, and every such store is flushed at
interpreter exit besides. Without ``write_behind`` each change is written before ``write`` returns.

Upgrades keep what the user has: the file carries ``schema_version``; a file of an older version (one
without the key was written before versions were kept: version 0) is brought forward by ``MIGRATIONS``
when read, one step per version, and written in the new form with the next change. A file of a newer
version is read for the keys this version knows and keeps its version and every other key.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import logging
import os
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from platformdirs import user_config_dir

from gui.core.preferences import MODEL_FOLDERS, Preference
from gui.core.words import Text, Words, by_english, english_error, message_of, words
from gui.services.write_behind import WriteBehind

__all__ = [
    "FLUSH_TIMEOUT_S",
    "MIGRATIONS",
    "SCHEMA_KEY",
    "SCHEMA_VERSION",
    "WRITE_DELAY_S",
    "SettingsStore",
    "default_settings_path",
]

log = logging.getLogger(__name__)

APP_NAME = "tightfit"
FILE_NAME = "settings.json"
# Far above what the window writes (a few KB per hundred models), far below what would hurt to read.
MAX_BYTES = 4 * 1024 * 1024
# The window writes at most four levels; a deeper file was not written by it.
MAX_DEPTH = 32
# Set-aside copies of a bad file get distinct names; past this many in one second, the last is replaced.
MAX_SET_ASIDE_TRIES = 100
# Writing behind: a spin box held down changes its value ten times a second; the file is written at most
# twice a second, and a crash loses at most this much.
WRITE_DELAY_S = 0.5
# How long a flush waits for the disk: a write takes milliseconds, a hung network home must not hang the close.
FLUSH_TIMEOUT_S = 5.0
T = TypeVar("T")

SCHEMA_KEY = "schema_version"
SCHEMA_VERSION = 1


def _versioned(data: dict[str, Any]) -> dict[str, Any]:
    """0 -> 1: the version is kept in the file; every value stays as it was."""
    return data


# MIGRATIONS[n] takes a file's data from version n to n + 1. Add an entry (and bump SCHEMA_VERSION) for
# every change to a stored key or its form; never edit a released one.
MIGRATIONS: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _versioned}


def default_settings_path() -> Path:
    return Path(user_config_dir(APP_NAME)) / FILE_NAME


class SettingsStore:
    """JSON-backed preferences (declared in gui.core.preferences); thread-safe. Each change is written to disk
    before ``write`` returns, or, with ``write_behind``, by a background thread soon after (``flush`` waits).

    ``path`` defaults to ``user_config_dir("tightfit")/settings.json`` and is injectable for tests. Keys
    the file has but nothing declares (from a newer version, say) are kept as they are.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        write_behind: bool = False,
        delay_s: float = WRITE_DELAY_S,
    ) -> None:
        self._path = Path(path) if path is not None else default_settings_path()
        self._lock = threading.RLock()
        # Why changes are not written to the file this session ("" when they are).
        self._unwritable = ""
        # One line for the window when the file could not be used as it was (None when it could).
        self.warning: Text | None = None
        # Why the latest change did not reach the file (None when it did, or nothing changed).
        self.write_error: str | None = None
        self._data: dict[str, Any] = self._load()
        self._behind: WriteBehind | None = None
        if write_behind:
            self._behind = WriteBehind(self._save_latest, delay_s=delay_s, name="settings-writer")
            _behind_stores.add(self)

    @property
    def path(self) -> Path:
        return self._path

    # -- declared preferences ------------------------------------------------------------------

    def read(self, pref: Preference[T]) -> T:
        """The stored value, or the default when there is none or it does not parse (logged)."""
        with self._lock:
            if pref.key not in self._data:
                return copy.deepcopy(pref.default)
            raw = copy.deepcopy(self._data[pref.key])
        try:
            return pref.parse(raw)
        except (ValueError, TypeError) as exc:
            log.warning("settings: %s in %s cannot be used (%s); using the default", pref.key, self._path, exc)
            return copy.deepcopy(pref.default)

    def write(self, pref: Preference[T], value: T) -> None:
        self.write_many({pref: value})

    def write_many(self, values: Mapping[Preference[Any], Any]) -> None:
        """Set several preferences in one write; raises before anything changes if a value is not JSON.
        A write the disk refuses is logged (``write_error`` says why), and the values hold for this session."""
        with self._lock:
            new = dict(self._data)
            new.setdefault(SCHEMA_KEY, SCHEMA_VERSION)
            changes = {pref.key: copy.deepcopy(pref.dump(value)) for pref, value in values.items()}
            # Serialise first so a value JSON cannot store raises before anything changes.
            if self._behind is None:
                new.update(changes)
                text = _text(new)
            else:
                _text(changes)  # the values already held were JSON when they came in
                new.update(changes)
            if self._unwritable:
                log.warning("settings: not saved to %s (%s); kept for this session", self._path, self._unwritable)
                self.write_error = self._unwritable
            elif self._behind is None:
                self._save(text)
            self._data = new
        if self._behind is not None and not self._unwritable:
            self._behind.changed()

    @property
    def pending(self) -> bool:
        """Whether a change is still to be written (only ever true for a store that writes behind)."""
        return self._behind is not None and self._behind.pending

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Write every change made so far and wait for it, at most ``timeout_s``; True when they are all on
        disk, False when the wait ran out or the write failed (logged; ``write_error`` says why)."""
        finished = self._behind is None or self._behind.flush(timeout_s)
        if not finished:
            log.warning("settings: %s not written within %.1f s; the writer may still finish", self._path, timeout_s)
        return finished and self.write_error is None

    def _save_latest(self) -> None:
        """Write the values as they are now (the writer thread's job): serialised under the lock, written
        outside it, so a read never waits for the disk."""
        with self._lock:
            text = _text(self._data)
        self._save(text)

    def _save(self, text: str) -> None:
        try:
            self._write(text)
        except OSError as exc:
            log.warning("settings: cannot write %s (%s); kept for this session", self._path, _why(exc))
            self.write_error = _why(exc)
        else:
            self.write_error = None

    # -- model folders ---------------------------------------------------------------------------

    @property
    def model_folders(self) -> list[str]:
        """Folders the library scans besides ``models/``, in the order the user added them."""
        return self.read(MODEL_FOLDERS)

    @model_folders.setter
    def model_folders(self, folders: list[str]) -> None:
        self.write(MODEL_FOLDERS, list(dict.fromkeys(os.fspath(f) for f in folders)))

    def add_model_folder(self, folder: str | os.PathLike[str]) -> list[str]:
        with self._lock:
            folders = self.model_folders
            text = os.fspath(folder)
            if text not in folders:
                folders.append(text)
                self.model_folders = folders
            return folders

    def remove_model_folder(self, folder: str | os.PathLike[str]) -> list[str]:
        with self._lock:
            text = os.fspath(folder)
            folders = [f for f in self.model_folders if f != text]
            self.model_folders = folders
            return folders

    # -- file ------------------------------------------------------------------------------------

    def _load(self) -> dict[str, Any]:
        try:
            raw = self._read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self._unwritable = f"it could not be read: {_why(exc)}"
            log.warning("settings: cannot read %s (%s); using defaults and leaving it as it is", self._path, _why(exc))
            self.warning = words(
                "Your settings in {path} could not be read ({error}): the defaults are used, and "
                "changes are kept until Tightfit closes without touching the file.",
                path=self._path,
                error=_why(exc),
            )
            return {}
        try:
            if len(raw) > MAX_BYTES:
                raise ValueError(words("larger than {mib} MiB", mib=MAX_BYTES // (1024 * 1024)))
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError(words("top level is a {kind}, not an object", kind=type(data).__name__))
            if _deeper_than(data, MAX_DEPTH):
                raise ValueError(words("nested deeper than {levels} levels", levels=MAX_DEPTH))
            return self._migrated(data)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            reason = _reason(exc)
            try:
                kept = words("the bad file is kept as {path}", path=self._set_aside())
            except OSError as move_exc:
                kept = words("the bad file could not be set aside ({error})", error=_why(move_exc))
            log.warning("settings: %s is corrupt (%s); using defaults, %s", self._path, reason, kept)
            self.warning = words(
                "Your settings file {path} was damaged ({reason}): the defaults are used, and {kept}.",
                path=self._path,
                reason=reason,
                kept=kept,
            )
            return {}

    def _migrated(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` brought to SCHEMA_VERSION; ValueError for a version that is not one."""
        version = data.get(SCHEMA_KEY, 0)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError(
                words("{key} is {value}, not a version number", key=SCHEMA_KEY, value=json.dumps(version)[:40])
            )
        if version > SCHEMA_VERSION:
            log.info(
                "settings: %s is from a newer Tightfit (version %d, this one knows %d); reading the keys it knows",
                self._path,
                version,
                SCHEMA_VERSION,
            )
            return data
        for step in range(version, SCHEMA_VERSION):
            data = MIGRATIONS[step](data)
            data[SCHEMA_KEY] = step + 1
        if version < SCHEMA_VERSION:
            log.info("settings: %s read as version %d (written by version %d)", self._path, SCHEMA_VERSION, version)
        return data

    def _set_aside(self) -> Path:
        """Move the file beside itself under a name with the date and time; the new name."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for n in range(MAX_SET_ASIDE_TRIES):
            target = self._path.with_name(f"{self._path.name}.{stamp}{f'-{n}' if n else ''}.bad")
            if not target.exists() or n == MAX_SET_ASIDE_TRIES - 1:
                os.replace(self._path, target)
                return target
        raise AssertionError("unreachable")

    def _read(self) -> bytes:
        """The file's bytes, at most MAX_BYTES + 1 of them; OSError for anything but a regular file."""
        # O_NONBLOCK: opening a FIFO left at the path must not hang start-up.
        fd = os.open(self._path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise OSError(words("it is a directory") if stat.S_ISDIR(mode) else words("it is not a regular file"))
            chunks = []
            left = MAX_BYTES + 1
            while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _write(self, text: str) -> None:
        # Through a symlink (a dotfiles folder, say): the link stays and the file it names is replaced, the
        # temporary file beside that one so the rename stays on one file system.
        target = Path(os.path.realpath(self._path))
        folder = target.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _text(data: Mapping[str, Any]) -> str:
    """The file's content for ``data``; TypeError or ValueError for a value JSON cannot hold."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# Every store that writes behind, flushed when the interpreter exits: the window flushes its own as it closes,
# this is for whatever else ends the process after a change.
_behind_stores: weakref.WeakSet[SettingsStore] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for store in list(_behind_stores):
        store.flush()


def _why(exc: OSError) -> str:
    return exc.strerror or english_error(exc)


# What Python's JSON parser says of a file it cannot parse (``JSONDecodeError.msg``), each kept translatable.
_JSON_PROBLEMS: dict[str, Words] = by_english(
    words("Expecting value"),
    words("Expecting property name enclosed in double quotes"),
    words("Expecting ',' delimiter"),
    words("Expecting ':' delimiter"),
    words("Extra data"),
    words("Unterminated string starting at"),
    words("Invalid control character at"),
    words("Illegal trailing comma before end of object"),
    words("Illegal trailing comma before end of array"),
)


def _reason(exc: ValueError | RecursionError) -> Text:
    """Why the file's content cannot be used, as its parser or ``_load`` said it (the English is ``str(exc)``)."""
    if isinstance(exc, RecursionError):
        return words("nested too deeply to parse")
    if isinstance(exc, json.JSONDecodeError):
        return words(
            "{problem}: line {line} column {column} (char {char})",
            problem=_JSON_PROBLEMS.get(exc.msg) or exc.msg,
            line=exc.lineno,
            column=exc.colno,
            char=exc.pos,
        )
    return message_of(exc)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON data nests more than ``limit`` lists or objects; iterative, so any depth is safe to ask."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False
