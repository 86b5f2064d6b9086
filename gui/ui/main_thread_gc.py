"""Python's cycle collector, run on the UI thread only.

The collector runs in whichever thread happens to allocate when a generation fills up. When that is a worker
thread (the library scan, telemetry, a download) and the garbage holds Qt objects (a closed dialog, a chart
item in a reference cycle), their C++ destructors run there: one takes a Qt lock and then waits for Python's
lock, while the UI thread holds Python's lock and waits for that Qt lock, and the window freezes for good.
So automatic collection is switched off, and the UI thread collects on a timer, each generation as often as
the collector itself would (its thresholds against the counts). Reference counting still frees everything
that is not in a cycle at once, on whatever thread drops it.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500


class MainThreadGc(QObject):
    """Automatic collection off; the owner's (UI) thread collects what is due every INTERVAL_MS."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.collect_due)
        self.collected = 0  # objects found unreachable so far, for tests and logs

    def start(self) -> None:
        gc.disable()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        gc.enable()

    def collect_due(self) -> int:
        found = collect_due()
        self.collected += found
        return found


def collect_due() -> int:
    """Collect the oldest generation whose count passed its threshold (as gc would); returns what it found."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    due = [gen for gen in range(3) if thresholds[gen] and counts[gen] > thresholds[gen]]
    return gc.collect(max(due)) if due else 0
