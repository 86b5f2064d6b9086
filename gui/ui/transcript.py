"""The conversation view: turns laid out a few blocks at a time, so no reply is long enough to freeze it.

The chat pane hands over the whole conversation as pieces of HTML per turn (heading, the reply's
markdown blocks, its figures). The view keeps what it already shows: a new or finished turn is
appended, an edited one replaces the tail from it on, and nothing before it is laid out again. Pieces
wait in a queue that is drained within a time budget per pass of the event loop.

Streaming text is written as it arrives, as plain text after the reply's heading.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QWidget

from gui.ui.plain import NoResourceBrowser

__all__ = ["BUDGET_S", "Transcript", "TurnView"]

# Layout work per pass of the event loop: well inside a frame, so typing and scrolling stay smooth.
BUDGET_S = 0.008
# Streamed text goes into a new block after this many characters without a line break: Qt lays out a
# block again whenever it grows, so one endless line would cost more with every token.
STREAM_BLOCK_CHARS = 2_000


@dataclass(frozen=True)
class TurnView:
    key: Hashable  # equal keys: the turn is shown as it was, and is left alone
    pieces: tuple[str, ...]  # HTML, one block each


class Transcript(NoResourceBrowser):
    settled = Signal()  # everything handed over is laid out

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown: list[tuple[Hashable, int]] = []  # (key, document position where the turn starts)
        self._queue: deque[tuple[Hashable | None, str]] = deque()  # (key of a turn starting here, piece)
        self._stream_from: int | None = None  # where streamed text starts, when there is some
        self._stream_run = 0  # characters streamed since the last line break
        self._cut_to: int | None = None  # the document is being cut back to this length, from the end
        self._drain_timer = QTimer(self)
        self._drain_timer.setSingleShot(True)
        self._drain_timer.setInterval(0)
        self._drain_timer.timeout.connect(self._drain)

    @property
    def pending(self) -> int:
        """Pieces still waiting to be laid out (a cut still under way counts as one)."""
        return len(self._queue) + (self._cut_to is not None)

    def show_turns(self, turns: Sequence[TurnView], placeholder: str = "") -> None:
        """Show these turns: keep the ones already shown in front, lay out the rest."""
        self._end_stream()
        keys = [t.key for t in turns]
        queued_keys = [key for key, _ in self._queue if key is not None]
        # What the document will hold once the queue drains, turn by turn.
        current = [key for key, _ in self._shown] + queued_keys
        keep = 0
        while keep < min(len(current), len(keys)) and current[keep] == keys[keep]:
            keep += 1
        if keep < len(self._shown) or not turns:
            self._truncate(keep)
        else:
            # Keep what is shown and what is queued up to ``keep``; drop the rest of the queue.
            self._trim_queue(keep - len(self._shown))
        for turn in turns[keep:]:
            for i, piece in enumerate(turn.pieces):
                self._queue.append((turn.key if i == 0 else None, piece))
        if not turns and placeholder:
            self.setHtml(placeholder)
        self._drain()

    def begin_stream(self) -> None:
        """Text written from now on goes after everything shown, as plain text, until the next show."""
        self._finish_queue()
        cursor = self._end_cursor()
        self._stream_from = cursor.position()
        self._stream_run = 0
        cursor.insertBlock()
        self._follow()

    def stream(self, piece: str) -> None:
        if self._stream_from is None:
            self.begin_stream()
        cursor = self._end_cursor()
        for line in piece.splitlines(keepends=True):
            if self._stream_run + len(line) > STREAM_BLOCK_CHARS and not line.startswith("\n"):
                cursor.insertBlock()
                self._stream_run = 0
            cursor.insertText(line)
            self._stream_run = 0 if line.endswith("\n") else self._stream_run + len(line)
        self._follow()

    # ---- internals -----------------------------------------------------------------------

    def _end_cursor(self) -> QTextCursor:
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _end_stream(self) -> None:
        """Take streamed text out: the turn it belongs to is shown in full by whoever ends the stream."""
        if self._stream_from is not None:
            self._cut(self._stream_from)
            self._stream_from = None

    def _cut(self, position: int) -> None:
        """Remove everything from ``position`` on, a slice per pass (a long reply is many blocks)."""
        self._cut_to = position if self._cut_to is None else min(self._cut_to, position)

    def _truncate(self, keep: int) -> None:
        """Remove every turn from the ``keep``-th on (and any streamed text), and whatever is queued."""
        self._queue.clear()
        if keep == 0:
            self.clear()
            self._shown = []
            self._cut_to = None
            return
        start = self._shown[keep][1] if keep < len(self._shown) else None
        del self._shown[keep:]
        if start is not None:
            self._cut(max(0, start - 1))  # and the paragraph break before it

    def _trim_queue(self, keep_queued_turns: int) -> None:
        kept: deque[tuple[Hashable | None, str]] = deque()
        turns = 0
        for key, piece in self._queue:
            if key is not None:
                turns += 1
                if turns > keep_queued_turns:
                    break
            kept.append((key, piece))
        self._queue = kept

    def _finish_queue(self) -> None:
        while self._cut_to is not None:
            self._cut_slice()
        while self._queue:
            self._insert(*self._queue.popleft())

    def _drain(self) -> None:
        deadline = time.perf_counter() + BUDGET_S
        while self._cut_to is not None and time.perf_counter() < deadline:
            self._cut_slice()
        while self._cut_to is None and self._queue and time.perf_counter() < deadline:
            self._insert(*self._queue.popleft())
        self._follow()
        if self.pending:
            self._drain_timer.start()
        else:
            self.settled.emit()

    def _cut_slice(self, size: int = 4_000) -> None:
        assert self._cut_to is not None
        cursor = self._end_cursor()
        end = cursor.position()
        cursor.setPosition(max(self._cut_to, end - size), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if end - size <= self._cut_to:
            self._cut_to = None

    def _insert(self, key: Hashable | None, piece: str) -> None:
        cursor = self._end_cursor()
        if not self.document().isEmpty():
            cursor.insertBlock()
        if key is not None:
            self._shown.append((key, cursor.position()))
        cursor.insertHtml(piece)

    def _follow(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
