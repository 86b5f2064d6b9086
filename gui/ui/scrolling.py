"""A region that scrolls up and down, never sideways: on a short screen its content keeps its own least
height and is reached by scrolling instead of being squeezed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QWidget


def vertical_scroll(content: QWidget, parent: QWidget | None = None) -> QScrollArea:
    area = QScrollArea(parent)
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area
