"""Saving behind the caller: ``changed()`` says there is something new to save and returns at once; one
background thread calls ``save`` for it, at most once per ``delay_s`` however many changes came in that time
(``save`` writes whatever is newest when it runs, so the last change always wins and nothing in between is
queued). ``flush()`` saves what is pending now and waits for it, up to a bounded time.

Qt-free; the thread is a daemon started at a change and ended after ``idle_s`` with nothing to do, so a
process that changes nothing has none, and one that exits is never held up by it (``atexit`` flushes the
stores that use this one).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["WriteBehind"]

log = logging.getLogger(__name__)

# A writer with nothing to do this long ends; the next change starts another.
IDLE_S = 10.0


class WriteBehind:
    """Calls ``save()`` on its own thread after changes, coalesced; ``save`` reports its own failures (it
    returns normally whether or not the disk took the data), anything it raises is logged here."""

    def __init__(self, save: Callable[[], None], *, delay_s: float, name: str, idle_s: float = IDLE_S) -> None:
        self._save = save
        self._delay_s = max(0.0, delay_s)
        self._idle_s = idle_s
        self._name = name
        self._cond = threading.Condition()
        self._changes = 0  # changes seen so far
        self._saved = 0  # changes saved (``save`` ran after them) so far
        self._hurry = False  # a flush waits: save now, without waiting out the delay
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> bool:
        """Whether a change has not been saved yet."""
        with self._cond:
            return self._saved < self._changes

    def changed(self) -> None:
        with self._cond:
            self._changes += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout_s: float) -> bool:
        """Save every change made before this call and wait for it; False if ``timeout_s`` ran out first."""
        with self._cond:
            wanted = self._changes
            if self._saved >= wanted:
                return True
            if threading.current_thread() is self._thread:  # from inside ``save``: waiting would never end
                return False
            self._hurry = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._saved >= wanted, timeout=max(0.0, timeout_s))

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: self._saved < self._changes, timeout=self._idle_s):
                    self._thread = None
                    return
                # The first change of a burst opens the window; the ones after it ride along.
                deadline = time.monotonic() + self._delay_s
                while not self._hurry and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)
                covered = self._changes
            try:
                self._save()
            except Exception:  # never lose the thread: the next change tries again
                log.exception("%s: saving failed", self._name)
            with self._cond:
                self._saved = covered
                if self._saved >= self._changes:
                    self._hurry = False
                self._cond.notify_all()
