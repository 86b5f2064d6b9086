"""One Tightfit window's chat and history without the rest of the window: a real HistoryPanel on a real
HistoryStore, and a conversation changed the way the chat pane changes it (send and reply, edit the last
message, regenerate, the system prompt), saved through ``HistoryPanel.save`` as the window saves it.

Run as a script (``python tests/history_window.py DB``) it is a second window in a second process: it reads
one JSON command per line, ``{"do": METHOD, "args": [...]}``, and answers ``{"ok": RESULT}`` or
``{"error": TEXT}`` on one line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's gui package, run as a script

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from gui.core.chat import Conversation
from gui.services.history import HistoryStore
from gui.ui.history_panel import HistoryPanel

WAIT_MS = 30_000


class ChatWindow:
    def __init__(self, db: Path) -> None:
        self.panel = HistoryPanel(HistoryStore(db))
        self.conversation = Conversation()
        self.errors: list[str] = []
        self.panel.opened.connect(self._opened)
        self.panel.failed.connect(self.errors.append)

    def _opened(self, _conversation_id: object, conversation: Conversation) -> None:
        self.conversation = conversation

    def _wait(self, signal: Any, start: Any) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        self.panel.failed.connect(loop.quit)
        QTimer.singleShot(WAIT_MS, loop.quit)
        start()
        loop.exec()
        signal.disconnect(loop.quit)
        self.panel.failed.disconnect(loop.quit)
        if self.errors:
            raise RuntimeError(self.errors.pop())

    # ---- what the window does --------------------------------------------------------------------

    def restore_last(self) -> int | None:
        """The start of a window: the conversation open when one last closed comes back."""
        self._wait(self.panel.listed, self.panel.restore_last)
        return self.panel.current_id

    def open(self, conversation_id: int) -> None:
        self._wait(self.panel.opened, lambda: self.panel.open(conversation_id))

    def save(self) -> int | None:
        self._wait(self.panel.saved, lambda: self.panel.save(self.conversation))
        return self.panel.current_id

    def ask(self, question: str) -> None:
        """Send a message: the question and the empty reply to come are saved at once, as the pane does."""
        self.conversation.add_user(question)
        self.conversation.start_reply()
        self.save()

    def finish(self, answer: str) -> None:
        """The reply streamed in and ended."""
        reply = self.conversation.turns[-1]
        assert reply.role == "assistant"
        reply.text = answer
        self.save()

    def send(self, question: str, answer: str) -> int | None:
        self.ask(question)
        self.finish(answer)
        return self.panel.current_id

    def burst(self, prefix: str, n: int) -> None:
        for i in range(n):
            self.send(f"{prefix} question {i}", f"{prefix} answer {i}")

    def edit_last(self) -> str:
        """Take the last user message back into the input box, dropping it and what came after."""
        turns = self.conversation.turns
        index = max(i for i, t in enumerate(turns) if t.role == "user")
        text = turns[index].text
        del turns[index:]
        self.save()
        return text

    def regenerate(self, answer: str) -> None:
        self.conversation.turns.pop()
        self.conversation.start_reply()
        self.save()
        self.finish(answer)

    def set_system_prompt(self, text: str) -> None:
        self.conversation.system_prompt = text
        self.save()

    def texts(self) -> list[str]:
        return [t.text for t in self.conversation.turns]

    def close(self) -> None:
        self.panel.shutdown()


def serve(db: Path) -> None:
    app = QApplication.instance() or QApplication([])
    window = ChatWindow(db)
    print(json.dumps({"ok": "ready"}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        try:
            answer: dict[str, Any] = {"ok": getattr(window, command["do"])(*command.get("args", []))}
        except Exception as exc:  # the test reads it and fails with it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)
        if command["do"] == "close":
            break
    app.processEvents()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
