"""A small JSON settings file under the user's config directory.

Writes are atomic (a temporary file in the same directory, flushed, then renamed over the old one), so
a crash or a full disk never leaves a half-written file. A file that cannot be read as a JSON object is
kept as ``settings.json.bak`` for the user to inspect, a warning is logged, and the defaults are used:
losing preferences is better than refusing to start.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

__all__ = ["DEFAULTS", "SettingsStore", "default_settings_path"]

log = logging.getLogger(__name__)

APP_NAME = "tightfit"
FILE_NAME = "settings.json"

# Keys every install starts with; other modules add their own through get/set with a default.
DEFAULTS: Mapping[str, Any] = {"model_folders": []}


def default_settings_path() -> Path:
    return Path(user_config_dir(APP_NAME)) / FILE_NAME


class SettingsStore:
    """JSON-backed settings; thread-safe; every ``set`` is written through at once.

    Values must be JSON-serialisable. ``path`` defaults to ``user_config_dir("tightfit")/settings.json``
    and is injectable for tests.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else default_settings_path()
        self._lock = threading.RLock()
        self._data: dict[str, Any] = self._load()

    @property
    def path(self) -> Path:
        return self._path

    # -- generic access ------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            if key in self._data:
                return _copy(self._data[key])
            if key in DEFAULTS:
                return _copy(DEFAULTS[key])
            return default

    def set(self, key: str, value: Any) -> None:
        self.update({key: value})

    def update(self, values: Mapping[str, Any]) -> None:
        """Set several keys in one write."""
        with self._lock:
            new = dict(self._data)
            new.update({k: _copy(v) for k, v in values.items()})
            self._write(new)  # raises before the in-memory copy changes if the value cannot be stored
            self._data = new

    def delete(self, key: str) -> None:
        with self._lock:
            if key not in self._data:
                return
            new = {k: v for k, v in self._data.items() if k != key}
            self._write(new)
            self._data = new

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            merged = {k: _copy(v) for k, v in DEFAULTS.items()}
            merged.update(_copy(self._data))
            return merged

    # -- typed accessors -----------------------------------------------------------------------

    @property
    def model_folders(self) -> list[str]:
        """Folders the library scans besides ``models/``, in the order the user added them."""
        value = self.get("model_folders")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            log.warning("settings: model_folders is not a list of strings (%r); ignoring it", value)
            return []
        return value

    @model_folders.setter
    def model_folders(self, folders: list[str]) -> None:
        unique: list[str] = []
        for folder in folders:
            text = os.fspath(folder)
            if text not in unique:
                unique.append(text)
        self.set("model_folders", unique)

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


def _copy(value: Any) -> Any:
    # Callers get their own lists and dicts, so mutating a returned value never changes the store
    # behind its back (and a later write of the same object is not a silent no-op).
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
