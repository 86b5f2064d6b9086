"""Saved conversations: the list beside the chat, search, rename, delete, and saving as the chat changes.

Every database call runs on one background thread (in order), so the UI never waits on the disk; results
come back as signals. Each conversation the chat pane shows is saved through a ConversationCopy, so a save
merges with what another window or a script wrote to the same conversation (gui.services.history says how).
When the history could not be opened from its file, a line above the list says why for the whole session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from copy import deepcopy
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.core.chat import Conversation
from gui.services.history import ConversationCopy, ConversationSummary, HistoryStore, SearchHit
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text, sentence_text
from gui.ui.plain import plain_label, plain_tip

tr = Tr("history_panel")
TITLE_CHARS = 60
UNDO_S = 10.0  # how long a deleted chat can be brought back


def title_for(conversation: Conversation) -> str:
    first = next((t.text for t in conversation.turns if t.role == "user" and t.text.strip()), tr("New chat"))
    line = " ".join(first.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


class HistoryPanel(QWidget):
    opened = Signal(object, object)  # conversation id, Conversation: put it in the chat pane
    listed = Signal()  # the list was refreshed (tests wait on it)
    saved = Signal(int)  # conversation id, after a save reached the disk
    failed = Signal(str)  # a database error, in words

    def __init__(self, store: HistoryStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.current_id: int | None = None
        self.can_switch: Callable[[], bool] = lambda: True  # the window says no while a reply streams
        # The stored conversation the chat pane shows, per "session" (a new chat or an opened one).
        # Only the database thread touches _copies, so two quick saves of a new chat create it once.
        self._session = 0
        self._copies: dict[int, ConversationCopy] = {}
        self._db = Background("history", parent=self)  # one thread: writes land in order
        self.search = QLineEdit(self)
        self.search.setPlaceholderText(tr("Search chats"))
        self.search.setAccessibleName(tr("Search chats"))
        self.search.setClearButtonEnabled(True)
        self.list = QListWidget(self)
        self.list.setAccessibleName(tr("Saved chats"))
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.rename_button = QPushButton(tr("Rename"), self)
        self.delete_button = QPushButton(tr("&Delete"), self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.delete_button)
        self.notice = plain_label(sentence_text(store.warning or ""), self, wrap=True)  # may name a file path
        self.notice.setVisible(not store.persistent)
        # A deleted chat is only hidden for a while, with a way back; then it is deleted for good.
        self._pending_delete: tuple[int, bool] | None = None  # (conversation id, it was the open one)
        self.undo_label = plain_label("", self, wrap=True)
        self.undo_button = QPushButton(tr("U&ndo"), self)
        self.undo_button.setAccessibleName(tr("Undo delete"))
        undo_row = QHBoxLayout()
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_button)
        self.undo_box = QWidget(self)
        self.undo_box.setLayout(undo_row)
        undo_row.setContentsMargins(0, 0, 0, 0)
        self.undo_box.hide()
        self._delete_timer = QTimer(self)
        self._delete_timer.setSingleShot(True)
        self._delete_timer.setInterval(round(UNDO_S * 1000))
        self._delete_timer.timeout.connect(self.delete_for_good)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.notice)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.undo_box)
        layout.addLayout(buttons)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _: self._search_timer.start())
        self.list.itemActivated.connect(self._item_chosen)
        self.list.itemClicked.connect(self._item_chosen)
        self.rename_button.clicked.connect(self._rename_clicked)
        self.delete_button.clicked.connect(self._delete_clicked)
        self.undo_button.clicked.connect(self.undo_delete)
        # Message counts change with every save: the list follows, a moment after the last one.
        self._list_timer = QTimer(self)
        self._list_timer.setSingleShot(True)
        self._list_timer.setInterval(300)
        self._list_timer.timeout.connect(self.refresh)
        if store.warning:
            QTimer.singleShot(0, lambda: self.failed.emit(sentence_text(store.warning or "")))

    # ---- the database thread ----------------------------------------------------------------

    def _run(self, job: Callable[[], Any], then: Callable[[Any], None] | None = None) -> None:
        # A full disk, a locked file: say so, keep the chat in memory.
        self._db.run(
            job,
            then,
            lambda exc: self.failed.emit(tr("Chat history: {error}").format(error=error_text(exc, "history"))),
        )

    def shutdown(self) -> None:
        """Delete what is waiting to be deleted, finish pending writes, then close the database."""
        self._delete_timer.stop()
        self.delete_for_good()
        self._db.shutdown(wait=True)
        self.store.close()

    # ---- opening and listing ----------------------------------------------------------------

    def restore_last(self) -> None:
        """Open the conversation that was open when the app last closed."""

        def job() -> tuple[ConversationCopy, Conversation] | None:
            last = self.store.last_opened()
            return ConversationCopy.open(self.store, last) if last is not None else None

        self._run(job, self._restored)
        self.refresh()

    def _restored(self, opened: tuple[ConversationCopy, Conversation] | None) -> None:
        if opened is not None:
            writer, conversation = opened
            self._session += 1
            session = self._session
            self._run(lambda: self._copies.__setitem__(session, writer))
            self.current_id = writer.id
            self.opened.emit(writer.id, conversation)

    def refresh(self) -> None:
        text = self.search.text().strip()
        if text:
            self._run(lambda: self.store.search(text), self._show_hits)
        else:
            self._run(lambda: self.store.list(200), self._show_list)

    def _show_list(self, rows: list[ConversationSummary]) -> None:
        self.list.clear()
        hidden = self._pending_delete[0] if self._pending_delete else None
        for row in rows:
            if row.id == hidden:
                continue
            # A date as the language writes it (a strftime format: "%m月%d日 %H:%M").
            when = time.strftime(tr("%d %b %H:%M"), time.localtime(row.updated))
            item = QListWidgetItem(f"{row.title}\n{when} · {tr('%n message(s)', n=row.n_turns)}")
            item.setData(Qt.ItemDataRole.UserRole, row.id)
            self.list.addItem(item)
            if row.id == self.current_id:
                item.setSelected(True)
        self.listed.emit()

    def _show_hits(self, hits: list[SearchHit]) -> None:
        self.list.clear()
        hidden = self._pending_delete[0] if self._pending_delete else None
        for hit in hits:
            if hit.conversation_id == hidden:
                continue
            item = QListWidgetItem(f"{hit.title}\n{hit.snippet}")
            item.setData(Qt.ItemDataRole.UserRole, hit.conversation_id)
            item.setToolTip(plain_tip(hit.snippet))
            self.list.addItem(item)
        self.listed.emit()

    def _item_chosen(self, item: QListWidgetItem) -> None:
        conversation_id = int(item.data(Qt.ItemDataRole.UserRole))
        if conversation_id == self.current_id:
            return
        if not self.can_switch():
            self.failed.emit(tr("Stop the reply first: it belongs to the chat that is open."))
            return
        self.open(conversation_id)

    def open(self, conversation_id: int) -> None:
        def job() -> tuple[ConversationCopy, Conversation]:
            opened = ConversationCopy.open(self.store, conversation_id)
            self.store.set_last_opened(conversation_id)
            return opened

        self._run(job, self._restored)

    def start_new(self) -> None:
        """The chat pane starts a new conversation; it is stored once it has a first message."""
        self.current_id = None
        self._session += 1
        self._run(lambda: self.store.set_last_opened(None))
        self.list.clearSelection()

    # ---- saving -------------------------------------------------------------------------------

    def save(self, conversation: Conversation) -> None:
        """Store the conversation as it is now (a snapshot, so later edits don't race the write)."""
        if not conversation.turns and self.current_id is None:
            return
        snapshot = deepcopy(conversation)
        session = self._session

        def job() -> tuple[int, int, bool]:
            writer = self._copies.setdefault(session, ConversationCopy(self.store))
            created = writer.save(snapshot, title_for(snapshot))
            assert writer.id is not None  # a save leaves the copy with its stored conversation
            if created:
                self.store.set_last_opened(writer.id)
            return session, writer.id, created

        def stored(result: tuple[int, int, bool]) -> None:
            saved_session, conversation_id, created = result
            if saved_session == self._session:
                self.current_id = conversation_id
            if created:
                self.refresh()
            else:
                self._list_timer.start()
            self.saved.emit(conversation_id)

        self._run(job, stored)

    # ---- rename / delete ----------------------------------------------------------------------

    def _selected_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else self.current_id

    def _rename_clicked(self) -> None:
        conversation_id = self._selected_id()
        if conversation_id is None:
            return
        current = self.list.currentItem().text().split("\n")[0] if self.list.currentItem() else ""
        title, ok = QInputDialog.getText(self, tr("Rename chat"), tr("Title:"), text=current)
        if ok and title.strip():
            self.rename(conversation_id, title.strip())

    def rename(self, conversation_id: int, title: str) -> None:
        self._run(lambda: self.store.rename(conversation_id, title), lambda _: self.refresh())

    def _delete_clicked(self) -> None:
        conversation_id = self._selected_id()
        if conversation_id is not None:
            self.delete(conversation_id)

    def delete(self, conversation_id: int) -> None:
        """Hide the chat, with Undo for a few seconds; then delete it for good."""
        self.delete_for_good()  # one deletion waits at a time
        title = next(
            (self.list.item(i).text().split("\n")[0] for i in range(self.list.count())
             if self.list.item(i).data(Qt.ItemDataRole.UserRole) == conversation_id),
            tr("the chat"),
        )  # fmt: skip
        was_open = conversation_id == self.current_id
        self._pending_delete = (conversation_id, was_open)
        if was_open:
            self.start_new()
            self.opened.emit(None, Conversation())
        self.undo_label.setText(tr("Deleted “{title}”.").format(title=title))
        self.undo_box.show()
        self._delete_timer.start()
        self.refresh()

    def undo_delete(self) -> None:
        pending, self._pending_delete = self._pending_delete, None
        self._delete_timer.stop()
        self.undo_box.hide()
        if pending is None:
            return
        conversation_id, was_open = pending
        if was_open and self.can_switch():
            self.open(conversation_id)
        self.refresh()

    def delete_for_good(self) -> None:
        """Delete the chat waiting to be deleted, now (the undo time is over, or the window closes)."""
        pending, self._pending_delete = self._pending_delete, None
        self.undo_box.hide()
        if pending is not None:
            conversation_id = pending[0]
            self._run(lambda: self.store.delete(conversation_id), lambda _: self.refresh())
