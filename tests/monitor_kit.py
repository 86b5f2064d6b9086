"""The Monitor tab on its own, for its tests: a fake clock the tests step (the fixtures ``clock`` and
``make_view`` that build views on it live in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage

from gui.ui.monitor import MonitorView

MakeView = Callable[..., MonitorView]


class FakeClock:
    def __init__(self, start: float = 5_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t


def ticks(view: MonitorView, clock: FakeClock, n: int, change: Callable[[int], None] | None = None) -> None:
    """``n`` samples a second apart; ``change(step)`` before each alters what the next one reads."""
    for step in range(n):
        if change is not None:
            change(step)
        clock.t += 1.0
        view.sample_now()


def plot_area(view: MonitorView, key: str) -> QRect:
    """The data area of one chart (no title, no axes) in the view's coordinates."""
    plot = view.charts.plots[key]
    box = plot.getPlotItem().getViewBox()
    rect = plot.mapFromScene(box.sceneBoundingRect()).boundingRect()
    return QRect(plot.mapTo(view, rect.topLeft()), rect.size())


def count_colour(image: QImage, rect: QRect, colour: str) -> int:
    """Pixels of exactly ``colour`` inside ``rect``."""
    wanted = QColor(colour).rgb()
    return sum(
        1
        for y in range(rect.top(), rect.bottom() + 1)
        for x in range(rect.left(), rect.right() + 1)
        if image.pixel(x, y) == wanted
    )
