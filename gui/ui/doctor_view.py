"""The Doctor tab: what is wrong with this machine for big models on an old card, worst first, each finding
with its numbers, why it matters, and the fix — a button where Tightfit can do it, a command to copy where
it cannot.

The checks run off the UI thread (the window's Background); this view only shows them.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from gui.core.doctor import STATUS_WORDS, Check, Status, by_severity, worst
from gui.core.theme import Palette
from gui.core.words import Text
from gui.ui.i18n import Tr, core_text
from gui.ui.plain import plain_label
from gui.ui.theme import themed_style

__all__ = ["DoctorView", "action_label"]

tr = Tr("doctor_view")

# Each status's colour in the list.


def status_colour(status: Status, palette: Palette) -> str:
    return {Status.FAIL: palette.error, Status.WARN: palette.warn, Status.UNKNOWN: palette.muted}.get(
        status, palette.ok
    )


def action_label(action: str) -> str:
    """The button's words for an action a check offers ('' for one this window cannot do)."""
    kind, _, arg = action.partition(":")
    if kind == "pin_numa" and arg.isdigit():
        return tr("Pin the engine to NUMA node {node}").format(node=arg)
    if kind == "set":
        key, _, value = arg.partition("=")
        if key == "n_threads":
            return tr("Use {n} threads").format(n=value)
        if key == "use_mmap" and value.lower() in ("false", "0", "off"):
            return tr("Turn memory mapping off")
        return tr("Set {key} to {value}").format(key=key, value=value)
    if kind == "open" and arg == "power":
        return tr("Open the power cap")
    if kind == "open" and arg == "log":
        return tr("Open the engine log")
    return ""


def doctor_words(text: Text) -> str:
    """A check's title, evidence, why or fix in the window's language: a constant by its text, a sentence
    gui/core/doctor.py composes from figures, versions and names (a ``Words``) by its template."""
    return core_text("doctor", text)


def tab_title(needing_a_look: int = 0) -> str:
    """The Doctor's tab, with how many checks need a look when some do (Alt+O: Alt+D is the history's Delete)."""
    title = tr("D&octor")
    return f"{title} ({needing_a_look})" if needing_a_look else title


def summary(checks: tuple[Check, ...]) -> str:
    """'1 failure, 2 warnings, 3 not known here, 12 ok' (gui.core.doctor.summary's words) in the window's language."""
    counts = {status: sum(c.status is status for c in checks) for status in Status}
    # Singular and plural as two texts, not a %n form: the words are the same with or without a translator.
    fail, warn = counts[Status.FAIL], counts[Status.WARN]
    parts = [
        text.format(n=n)
        for n, text in (
            (fail, tr("{n} failure") if fail == 1 else tr("{n} failures")),
            (warn, tr("{n} warning") if warn == 1 else tr("{n} warnings")),
            (counts[Status.UNKNOWN], tr("{n} not known here")),
            (counts[Status.OK], tr("{n} ok")),
        )
        if n
    ]
    return tr(", ").join(parts) or tr("no checks")


class DoctorView(QWidget):
    run_requested = Signal()
    action_requested = Signal(str)  # a check's Fix.action

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checks: tuple[Check, ...] = ()
        self.summary = plain_label(tr("The checks run once the engine has started."), self, wrap=True)
        self.summary.setAccessibleName(tr("Doctor summary"))
        self.run_button = QPushButton(tr("Chec&k again"), self)
        self.run_button.setToolTip(tr("Run every check again (the engine, driver, CPU, memory, card and settings)"))
        self.run_button.clicked.connect(self.run_requested)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.run_button)
        self._list = QWidget(self)
        self._rows = QVBoxLayout(self._list)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self._rows.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        self.action_buttons: dict[str, QPushButton] = {}
        self.command_boxes: dict[str, QPlainTextEdit] = {}

    def show_running(self) -> None:
        self.run_button.setEnabled(False)
        self.summary.setText(tr("Checking this machine…") if not self.checks else tr("Checking again…"))

    def show_failed(self, words: str) -> None:
        self.run_button.setEnabled(True)
        self.summary.setText(tr("The checks could not run: {error}").format(error=words))

    def show_checks(self, checks: tuple[Check, ...]) -> None:
        self.checks = by_severity(checks)
        self.run_button.setEnabled(True)
        self.summary.setText(
            tr("{summary} — checked at {time}.").format(summary=summary(self.checks), time=time.strftime("%H:%M"))
        )
        while self._rows.count() > 1:
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.action_buttons.clear()
        self.command_boxes.clear()
        for index, check in enumerate(self.checks):
            self._rows.insertWidget(index, self._row(check))

    def worst(self) -> Status | None:
        return worst(self.checks) if self.checks else None

    def badge_icon(self) -> QIcon:
        """The tab's icon: a failure or a warning is seen from every tab."""
        status = self.worst()
        pixmap = (
            {
                Status.FAIL: QStyle.StandardPixmap.SP_MessageBoxCritical,
                Status.WARN: QStyle.StandardPixmap.SP_MessageBoxWarning,
            }.get(status)
            if status is not None
            else None
        )
        return self.style().standardIcon(pixmap) if pixmap is not None else QIcon()

    def _row(self, check: Check) -> QFrame:
        frame = QFrame(self._list)
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        frame.setObjectName(f"check:{check.id}")
        status = QLabel(doctor_words(STATUS_WORDS[check.status]), frame)
        themed_style(status, lambda palette: f"color: {status_colour(check.status, palette)}; font-weight: bold")
        status.setMinimumWidth(40)
        title_words = doctor_words(check.title)
        title = plain_label(title_words, frame, wrap=True)
        title.setStyleSheet("font-weight: bold")
        head = QHBoxLayout()
        head.addWidget(status)
        head.addWidget(title, 1)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(head)
        if check.evidence:
            layout.addWidget(plain_label(doctor_words(check.evidence), frame, wrap=True))
        if check.why and check.status is not Status.OK:
            why = plain_label(doctor_words(check.why), frame, wrap=True)
            themed_style(why, lambda palette: f"color: {palette.muted}")
            layout.addWidget(why)
        fix = check.fix
        if fix is not None and check.status is not Status.OK:
            if fix.words:
                layout.addWidget(
                    plain_label(tr("Fix: {words}").format(words=doctor_words(fix.words)), frame, wrap=True)
                )
            words = action_label(fix.action)
            if words:
                button = QPushButton(words, frame)
                button.setAccessibleName(tr("{action} ({check})").format(action=words, check=title_words))
                button.clicked.connect(lambda _=False, action=fix.action: self.action_requested.emit(action))
                self.action_buttons[check.id] = button
                row = QHBoxLayout()
                row.addWidget(button)
                row.addStretch(1)
                layout.addLayout(row)
            if fix.command:
                box = QPlainTextEdit(fix.command, frame)
                box.setReadOnly(True)
                box.setProperty("command", True)  # a shell command, as it is typed: never translated
                # Wrapped to the width, so the whole command is seen; Copy takes it as it is.
                box.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
                box.setAccessibleName(tr("Command for {check}").format(check=title_words))
                box.setTabChangesFocus(True)
                box.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
                lines = min(6, fix.command.count("\n") + 2)  # room for a long line to wrap once
                box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 12)
                copy = QPushButton(tr("Copy"), frame)
                copy.setToolTip(tr("Copy the command to paste it into a terminal"))
                copy.clicked.connect(lambda _=False, text=fix.command: _copy(text))
                self.command_boxes[check.id] = box
                row = QHBoxLayout()
                row.addWidget(box, 1)
                row.addWidget(copy)
                layout.addLayout(row)
        return frame


def _copy(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)
