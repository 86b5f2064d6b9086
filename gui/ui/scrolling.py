"""A region that scrolls up and down, never sideways: on a short screen its content keeps its own least
height and is reached by scrolling instead of being squeezed.

The wheel over a slider, spin box or list inside it scrolls the region, unless that widget has the focus
(clicked or tabbed to): a user scrolling down the settings does not change every setting the pointer
passes over."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollArea,
    QScrollBar,
    QWidget,
)


class _WheelScrollsRegion(QObject):
    """Passes a wheel turned over an unfocused value widget on to the region's scroll bar, as the region
    does with a wheel over its own background."""

    def __init__(self, area: QScrollArea) -> None:
        super().__init__(area)
        self._area = area

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) and not watched.hasFocus():
            QApplication.sendEvent(self._area.verticalScrollBar(), event)
            return True
        return False


def _takes_values(widget: QWidget) -> bool:
    return isinstance(widget, QAbstractSlider | QAbstractSpinBox | QComboBox) and not isinstance(widget, QScrollBar)


def wheel_scrolls_region(area: QScrollArea) -> None:
    """Make the wheel over the value widgets in the region scroll it."""
    guard = _WheelScrollsRegion(area)
    content = area.widget()
    if content is None:
        return
    for widget in content.findChildren(QWidget):
        if _takes_values(widget):
            if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
                widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel alone does not give focus
            widget.installEventFilter(guard)


def vertical_scroll(content: QWidget, parent: QWidget | None = None) -> QScrollArea:
    area = QScrollArea(parent)
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    wheel_scrolls_region(area)
    return area
