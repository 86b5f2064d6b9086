"""Text from strangers shown as written: model files, hub servers, model replies, templates and logs.

Qt renders a label or a tooltip as rich text whenever the text looks like HTML, and rich text loads the
images it names: a model named ``<img src="file:///dev/zero">`` would read forever. Labels that show
data are plain-text labels; tooltips that show data are escaped; the rich-text documents the window does
use load no resources at all.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QPalette
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser, QWidget

__all__ = ["NoResourceBrowser", "open_link", "plain_box", "plain_label", "plain_tip"]

# Links in a reply that may be handed to the desktop's browser or mail program.
_OPENABLE = ("http", "https", "mailto")


def plain_label(text: str = "", parent: QWidget | None = None, *, wrap: bool = False) -> QLabel:
    """A label that shows its text literally, whatever it contains."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(text)
    return label


def plain_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    informative: str = "",
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
) -> QMessageBox:
    """A message box that shows its text literally: QMessageBox.question and friends render text that looks
    like HTML as rich text (and load the images it names)."""
    box = QMessageBox(icon, title, "", buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    for label in box.findChildren(QLabel):  # the informative text's label does not follow setTextFormat
        label.setTextFormat(Qt.TextFormat.PlainText)
    return box


def plain_tip(text: str) -> str:
    """Tooltip markup that shows ``text`` literally (line breaks kept)."""
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>"


def open_link(url: QUrl) -> bool:
    """Hand a web or mail link to the desktop; anything else (file:, javascript:, …) is refused."""
    if url.scheme().lower() not in _OPENABLE:
        return False
    return QDesktopServices.openUrl(url)


class NoResourceBrowser(QTextBrowser):
    """A rich-text view that never loads an image, style sheet or page: not from disk, not from the
    network, not from Qt resources. Links are not followed in place (that would replace the document)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # Qt calls it for every image, page and style sheet
        return None


class TextArea(NoResourceBrowser):
    """A few lines of text in a region that never changes size: longer text scrolls inside it, so the
    layout around it does not jump as the text changes, and nothing is cut off."""

    def __init__(self, lines: int, parent: QWidget | None = None, *, rich: bool = False) -> None:
        super().__init__(parent)
        self._rich = rich
        self.setFrameShape(QTextBrowser.Shape.NoFrame)
        self.setReadOnly(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, QColor(0, 0, 0, 0))  # reads as part of the panel
        self.setPalette(palette)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(0)
        self.setFixedHeight(self.fontMetrics().lineSpacing() * lines + 4)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def setText(self, text: str) -> None:  # the QLabel name, so it stands in for one
        if self._rich:
            self.setHtml(text)
        else:
            self.setPlainText(text)

    def text(self) -> str:
        return self.toPlainText()
