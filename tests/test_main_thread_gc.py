"""Cycles are collected on the UI thread only (gui/ui/main_thread_gc.py): a worker thread that allocates far
past the collector's thresholds never runs it, and the UI thread's timer collects what is due."""

from __future__ import annotations

import gc
import threading
from typing import ClassVar

from gui.ui.main_thread_gc import MainThreadGc


class _Cycle:
    """Part of a reference cycle that notes the thread that destroyed it."""

    destroyed_on: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.destroyed_on.append(threading.current_thread().name)


def test_a_worker_never_collects_and_the_ui_thread_does(qtbot) -> None:
    guard = MainThreadGc(interval_ms=20)
    guard.start()
    thresholds = gc.get_threshold()
    try:
        assert not gc.isenabled()
        gc.collect()
        _Cycle.destroyed_on.clear()
        _Cycle()  # unreachable at once, but only the collector can free a cycle

        peak: list[int] = []

        def allocate() -> None:  # far past the youngest generation's threshold, in containers the collector tracks
            kept = [[i] for i in range(100_000)]
            peak.append(gc.get_count()[0])
            del kept

        runs = sum(stats["collections"] for stats in gc.get_stats())
        worker = threading.Thread(target=allocate, name="worker")
        worker.start()
        worker.join()
        assert peak[0] > 100 * gc.get_threshold()[0]
        assert sum(stats["collections"] for stats in gc.get_stats()) == runs  # the worker never collected
        assert _Cycle.destroyed_on == []  # the cycle made before is still there
        gc.set_threshold(1, 1, 1)  # every generation due at the next tick, whatever other threads allocate or free
        backlog = [[i] for i in range(100)]
        qtbot.waitUntil(lambda: _Cycle.destroyed_on != [], timeout=5000)  # the UI thread's timer collected it
        del backlog
        # On the UI thread: by this collector, or the one the test session keeps on the application (conftest).
        assert _Cycle.destroyed_on == [threading.main_thread().name]
    finally:
        guard.stop()
        gc.set_threshold(*thresholds)
        gc.disable()  # as the test session keeps it (tests/conftest.py)
