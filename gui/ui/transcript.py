"""The conversation view: turns laid out a few blocks at a time, so no reply is long enough to freeze it.

The chat pane hands over the whole conversation as pieces of HTML per turn (heading, the reply's
markdown blocks, its figures). The view keeps what it already shows: a new or finished turn is
appended, an edited one replaces the tail from it on, and nothing before it is laid out again. Pieces
wait in a queue that is drained within a time budget per pass of the event loop.

A reply being written is shown as it will look when finished: its settled blocks are laid out once,
and the block still being written is replaced as it grows. The view follows new text only while the
user is at the bottom; scrolled up to read, they stay where they are.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCursor, QTextDocument, QTextDocumentFragment
from PySide6.QtWidgets import QWidget

from gui.ui.plain import NoResourceBrowser

__all__ = ["BUDGET_S", "Transcript", "TurnView"]

# Layout work per pass of the event loop: well inside a frame, so typing and scrolling stay smooth.
BUDGET_S = 0.008
# How near the end (in pixels) still counts as "at the bottom", following new text.
FOLLOW_SLACK_PX = 24


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
        self._stream_from: int | None = None  # where the reply being written starts, when there is one
        self._tail_from: int | None = None  # where its block still being written starts
        self._cut_to: int | None = None  # the document is being cut back to this length, from the end
        self._placeholder = False  # the document holds the words shown under an empty conversation
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
        if self._placeholder and turns:
            self.clear()  # the first turn replaces the words that stood in for it
            self._placeholder = False
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
            self._placeholder = True
        self._drain()

    def stream(self, settled: Sequence[str], tail: Sequence[str]) -> None:
        """The reply being written, after everything shown: ``settled`` pieces are new blocks that stay;
        ``tail`` (the block still being written) replaces the tail shown before. Ends at the next show."""
        following = self._at_bottom()
        if self._stream_from is None:
            self._finish_queue()
            self._stream_from = self._end_cursor().position()
        if self._tail_from is not None:
            self._remove_from(self._tail_from)
        for piece in settled:
            self._insert(None, piece)
        self._tail_from = self._end_cursor().position()
        for piece in tail:
            self._insert(None, piece)
        self._follow(following)

    # ---- internals -----------------------------------------------------------------------

    def _end_cursor(self) -> QTextCursor:
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _end_stream(self) -> None:
        """Take the streamed reply out: the turn it belongs to is shown in full by whoever ends the stream."""
        if self._stream_from is not None:
            self._cut(self._stream_from)
            self._stream_from = self._tail_from = None

    def _remove_from(self, position: int) -> None:
        cursor = self._end_cursor()
        cursor.setPosition(position, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

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
        following = self._at_bottom()
        deadline = time.perf_counter() + BUDGET_S
        while self._cut_to is not None and time.perf_counter() < deadline:
            self._cut_slice()
        while self._cut_to is None and self._queue and time.perf_counter() < deadline:
            self._insert(*self._queue.popleft())
        self._follow(following)
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
        """Lay a piece out as blocks of its own, with its own formats.

        Qt merges a fragment's first block into the block at the cursor, which keeps that block's format:
        a plain ``insertBlock()`` after a list, quote or code block would put the next piece (the stats,
        the next heading and everything after) in that list or format. The block made for the piece takes
        the piece's first format instead; a piece that opens with a list makes its list's blocks itself."""
        source = QTextDocument()
        source.setHtml(piece)
        first = source.firstBlock()
        cursor = self._end_cursor()
        if self.document().isEmpty():
            cursor.setBlockFormat(_own_format(first))
            cursor.setBlockCharFormat(first.charFormat())
        elif key is not None or first.textList() is None:
            cursor.insertBlock(_own_format(first), first.charFormat())
        if key is not None:
            self._shown.append((key, cursor.position()))
        cursor.insertFragment(QTextDocumentFragment(source))

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - FOLLOW_SLACK_PX

    def _follow(self, following: bool) -> None:
        """Keep the newest text in view, unless the user scrolled up to read."""
        if following:
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())


def _own_format(block: QTextBlock) -> QTextBlockFormat:
    """A piece's first block format, when it can stand alone (a list's or table's belongs to that object)."""
    if block.textList() is not None or QTextCursor(block).currentTable() is not None:
        return QTextBlockFormat()
    return block.blockFormat()
