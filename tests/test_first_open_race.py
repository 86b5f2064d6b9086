"""Many Tightfit processes opening a fresh data folder at the same moment (two windows started together, a
window and a script): every one ends with the chat history and the journey on disk, and no row any of them
writes is lost. Real SQLite files, real processes, all released at once by a barrier."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from gui.core.journey import BuildInfo, LoadRecord
from gui.core.params import LoadSettings
from gui.services.history import HistoryStore
from gui.services.journey import JourneyStore

OPENERS = 16
ROWS = 25  # journey loads each opener writes, at once after opening


def open_and_write(folder: str, n: int, barrier: Any, results: Any) -> None:
    barrier.wait()
    history = HistoryStore(Path(folder) / "history.sqlite3")
    journey = JourneyStore(Path(folder) / "journey.sqlite3")
    conversation = history.create(f"chat {n}")
    settings = LoadSettings().to_dict()
    for i in range(ROWS):
        uid = f"{n}-{i}"
        journey.add_load(LoadRecord(uid, float(i), "/m.gguf", "m.gguf", settings, BuildInfo(), "CPU", 1.0, 0, 30, None))
    results.put((n, history.persistent, journey.persistent, history.warning, journey.warning, conversation))
    history.close()
    journey.close()


def test_openers_racing_on_a_fresh_folder_all_keep_their_files_and_rows(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"  # not even the folder exists yet
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(OPENERS)
    results = context.Queue()
    openers = [context.Process(target=open_and_write, args=(str(folder), n, barrier, results)) for n in range(OPENERS)]
    for process in openers:
        process.start()
    said = [results.get(timeout=120) for _ in openers]
    for process in openers:
        process.join(timeout=60)
        assert process.exitcode == 0
    for n, history_on_disk, journey_on_disk, history_warning, journey_warning, _ in said:
        assert history_on_disk and journey_on_disk, (n, history_warning, journey_warning)
        assert history_warning is None and journey_warning is None
    history = HistoryStore(folder / "history.sqlite3")
    journey = JourneyStore(folder / "journey.sqlite3")
    assert history.persistent and journey.persistent
    assert sorted(s.title for s in history.list(limit=100)) == sorted(f"chat {n}" for n in range(OPENERS))
    assert journey.counts()["loads"] == OPENERS * ROWS
    history.close()
    journey.close()
