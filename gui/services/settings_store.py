"""A small JSON settings file under the user's config directory.

Writes are atomic (a temporary file in the same directory, flushed, then renamed over the old one), so
a crash or a full disk never leaves a half-written file. A file that cannot be read as a JSON object is
kept as ``settings.json.bak`` for the user to inspect, a warning is logged, and the defaults are used:
losing preferences is better than refusing to start.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from platformdirs import user_config_dir

from gui.core.preferences import MODEL_FOLDERS, Preference

__all__ = ["SettingsStore", "default_settings_path"]

log = logging.getLogger(__name__)

APP_NAME = "tightfit"
FILE_NAME = "settings.json"
T = TypeVar("T")


def default_settings_path() -> Path:
    return Path(user_config_dir(APP_NAME)) / FILE_NAME


class SettingsStore:
    """JSON-backed preferences (declared in gui.core.preferences); thread-safe; every write goes to disk at once.

    ``path`` defaults to ``user_config_dir("tightfit")/settings.json`` and is injectable for tests. Keys
    the file has but nothing declares (from a newer version, say) are kept as they are.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else default_settings_path()
        self._lock = threading.RLock()
        self._data: dict[str, Any] = self._load()

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
        """Set several preferences in one write; raises before anything changes if a value cannot be stored."""
        with self._lock:
            new = dict(self._data)
            new.update({pref.key: copy.deepcopy(pref.dump(value)) for pref, value in values.items()})
            self._write(new)  # raises before the in-memory copy changes if the value cannot be stored
            self._data = new

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
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            log.warning("settings: cannot read %s (%s); using defaults", self._path, exc.strerror or exc)
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"top level is a {type(data).__name__}, not an object")
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
            backup = self._path.with_name(self._path.name + ".bak")
            try:
                os.replace(self._path, backup)
                kept = f"kept as {backup}"
            except OSError as move_exc:
                kept = f"could not keep a copy ({move_exc.strerror or move_exc})"
            log.warning("settings: %s is corrupt (%s); using defaults, the bad file %s", self._path, exc, kept)
            return {}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        # Serialise first so a value JSON cannot store fails before anything touches the disk.
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        folder = self._path.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self._path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

