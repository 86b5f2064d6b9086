"""The chat pane: transcript, input, Send/Stop, and per-reply speed figures."""

from __future__ import annotations

import contextlib
import html
import time
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gui.core import protocol as p
from gui.core.chat import Conversation, Turn, format_stats
from gui.services.engine_client import EngineUnavailable, WorkerExited
from gui.ui.engine_bridge import EngineBridge

ROLE_NAMES = {"user": "You", "assistant": "Model", "system": "System"}
FRAME_S = 1 / 60  # at most one transcript update per frame


class ChatPane(QWidget):
    reply_finished = Signal(object)  # ReplyStats
    notice_changed = Signal(str)

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.conversation = Conversation()
        self.max_tokens = 512
        self.sampling = p.Sampling()
        self.ignore_eos = False  # benchmarks: always generate max_tokens
        self._request: int | None = None
        self._reply: Turn | None = None
        self._ready = False
        self._last_flush = 0.0
        self.arrivals: list[tuple[float, int]] = []  # (pane time, tokens) per update, for the benchmark

        self.transcript = QTextBrowser(self)
        self.transcript.setAccessibleName("Conversation")
        self.transcript.setOpenExternalLinks(False)
        self.notice = QLabel(self)
        self.notice.setWordWrap(True)
        self.notice.setAccessibleName("Engine notice")
        self.notice.setStyleSheet(
            "QLabel { background: #fff4ce; color: #4a3b00; border: 1px solid #e0c060; padding: 6px; }"
        )
        self.notice.hide()
        self.input = QPlainTextEdit(self)
        self.input.setPlaceholderText("Type a message. Ctrl+Enter sends, Esc stops the reply.")
        self.input.setAccessibleName("Message")
        self.input.setFixedHeight(80)
        self.send_button = QPushButton("Send", self)
        self.send_button.setAccessibleName("Send message")
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setAccessibleName("Stop reply")
        self.stats_label = QLabel("No reply yet.", self)
        self.stats_label.setAccessibleName("Reply statistics")
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QHBoxLayout()
        buttons.addWidget(self.stats_label, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.notice)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.input)
        layout.addLayout(buttons)

        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        QShortcut(QKeySequence("Ctrl+Return"), self, self.send)
        QShortcut(QKeySequence("Ctrl+Enter"), self, self.send)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self._flush)
        bridge.tokens_ready.connect(self._tokens_ready)
        bridge.engine_event.connect(self._on_event)
        self._update_buttons()
        self.show_conversation()

    # ---- state ----------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        return self._request is not None

    def set_ready(self, ready: bool) -> None:
        """Whether a model is loaded and can take messages."""
        self._ready = ready
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.send_button.setEnabled(self._ready and not self.streaming)
        self.stop_button.setEnabled(self.streaming)

    def show_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.setVisible(bool(text))
        self.notice_changed.emit(text)

    # ---- actions --------------------------------------------------------------------------

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or not self._ready or self.streaming:
            return
        self.conversation.add_user(text)
        self._reply = self.conversation.start_reply()
        try:
            self._request = self.bridge.client.generate(self.conversation.messages(), self.max_tokens, self.sampling)
        except EngineUnavailable as exc:
            self.conversation.turns.pop()
            self._reply = None
            self.show_notice(f"Cannot send: {exc}. Your message is kept in the box.")
            self.show_conversation()
            return
        self.input.clear()
        self.arrivals = []
        self.stats_label.setText("Waiting for the first token…")
        self.show_conversation()
        self._update_buttons()

    def stop(self) -> None:
        if self._request is not None:
            with contextlib.suppress(EngineUnavailable):
                self.bridge.client.stop(self._request)

    # ---- streaming ------------------------------------------------------------------------

    def _tokens_ready(self) -> None:
        wait = FRAME_S - (time.perf_counter() - self._last_flush)
        if wait <= 0:
            self._flush()
        elif not self._flush_timer.isActive():
            self._flush_timer.start(int(wait * 1000) + 1)

    def _flush(self) -> None:
        self._last_flush = time.perf_counter()
        tokens = [t for t, _ in self.bridge.take_tokens() if t.request_id == self._request]
        if not tokens or self._reply is None:
            return
        piece = "".join(t.text for t in tokens)
        self._reply.text += piece
        self.arrivals.append((self._last_flush, len(tokens)))
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(piece)
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())
        received = sum(n for _, n in self.arrivals)
        elapsed = self._last_flush - self.arrivals[0][0]
        if received > 1 and elapsed > 0:
            self.stats_label.setText(f"{received} tokens · {(received - 1) / elapsed:.1f} tok/s")

    def _on_event(self, event: Any) -> None:
        if isinstance(event, p.Done) and event.request_id == self._request:
            self._flush()
            if self._reply is not None:
                self._reply.stats = event.stats
                if event.stats.finish_reason == "cancelled":
                    self._reply.note = "stopped"
            self.stats_label.setText(format_stats(event.stats))
            self._end_reply()
            self.reply_finished.emit(event.stats)
        elif isinstance(event, p.GenerateFailed) and event.request_id == self._request:
            self._flush()
            if self._reply is not None:
                self._reply.note = f"failed: {event.error}"
            self.show_notice(f"The reply failed: {event.error}")
            self._end_reply()
        elif isinstance(event, WorkerExited) and not event.expected:
            if self.streaming:
                self._flush()
                if self._reply is not None:
                    self._reply.note = "interrupted: the engine stopped"
                self._end_reply()
            self._ready = False
            self._update_buttons()

    def _end_reply(self) -> None:
        self._request = None
        self._reply = None
        self.show_conversation()
        self._update_buttons()

    # ---- rendering ------------------------------------------------------------------------

    def show_conversation(self) -> None:
        """Rebuild the transcript from the conversation (on turn boundaries, not per token)."""
        blocks = []
        for turn in self.conversation.turns:
            who = ROLE_NAMES.get(turn.role, turn.role)
            colour = "#1f5fbf" if turn.role == "user" else "#2f7d32"
            body = html.escape(turn.text).replace("\n", "<br>")
            note = f' <i style="color:#a05a00">[{html.escape(turn.note)}]</i>' if turn.note else ""
            stats = ""
            if turn.stats is not None:
                stats = f'<br><span style="color:#777; font-size:small">{html.escape(format_stats(turn.stats))}</span>'
            blocks.append(f'<p><b style="color:{colour}">{who}:</b> {body}{note}{stats}</p>')
        if not blocks:
            blocks.append('<p style="color:#777">Load a model, then type a message below.</p>')
        streaming = self._reply is not None and self._reply is self.conversation.last
        if streaming:
            blocks.pop()  # the reply being streamed is written token by token after the prefix
        self.transcript.setHtml("".join(blocks))
        if streaming:
            cursor = self.transcript.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertBlock()
            cursor.insertHtml('<b style="color:#2f7d32">Model:</b> ')
            cursor.insertText(self._reply.text if self._reply else "")
        self.transcript.verticalScrollBar().setValue(self.transcript.verticalScrollBar().maximum())
