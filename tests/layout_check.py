"""Render the real window at a size (and a scale factor, set before Qt starts) and report what a user
would find wrong with it: text cut off by its widget, the plan's bar and verdict out of view, buttons
outside the window. Run by tests/test_layout.py in a process of its own, since the scale factor is
fixed when Qt starts:

    QT_SCALE_FACTOR=2 python tests/layout_check.py MODELS_DIR 800 500 out.png report.json
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from PySide6.QtCore import QRect  # noqa: E402
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QScrollArea, QTabWidget, QWidget  # noqa: E402


def settle(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)  # the layout's posted events and timers, not a spin


def settle_until(app: QApplication, ready: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    """Until ``ready()`` holds (then the layout a little longer); SystemExit saying what never came."""
    end = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > end:
            raise SystemExit(f"layout check: {what} did not come within {timeout_s:.0f} s")
        app.processEvents()
        time.sleep(0.005)
    settle(app, 0.3)


def clipped(widget: QWidget) -> str | None:
    """Why this widget's text does not fit it, or None. Labels that wrap must fit in height; others in width."""
    if isinstance(widget, QLabel):
        text = widget.text()
        if not text or (widget.textFormat() != widget.textFormat().PlainText and "<" in text):
            return None  # rich text lays itself out
        room = widget.contentsRect()
        if widget.wordWrap():
            needed = widget.heightForWidth(room.width())
            return f"needs {needed}px of height, has {room.height()}" if needed > room.height() + 1 else None
        width = max(widget.fontMetrics().horizontalAdvance(line) for line in text.split("\n"))
        return f"needs {width}px, has {room.width()}" if width > room.width() + 1 else None
    if isinstance(widget, QAbstractButton) and widget.text():
        text = widget.text().replace("&", "")
        width = widget.fontMetrics().horizontalAdvance(text)
        room = widget.width() - 8  # the button's frame
        return f"needs {width}px, has {room}" if width > room else None
    return None


def inside(widget: QWidget, window: QWidget) -> bool:
    """Whether the user can reach the widget: inside the window, or inside the content of a scroll area."""
    area = widget.parentWidget()
    while area is not None and area is not window and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    if isinstance(area, QScrollArea) and area.widget() is not None:
        content = area.widget()
        top_left = widget.mapTo(content, widget.rect().topLeft())
        return content.rect().contains(QRect(top_left, widget.size())) and inside(area, window)
    top_left = widget.mapTo(window, widget.rect().topLeft())
    return window.rect().contains(QRect(top_left, widget.size()))


def main() -> None:
    models, width, height, png, report = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    home = tempfile.mkdtemp(prefix="tightfit-layout-")
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = os.path.join(home, var.lower())
    app = QApplication(sys.argv[:1])
    from fake_engine import FakeEngine

    from gui.app import build_services
    from gui.core.params import LoadSettings
    from gui.ui.compose import build_window

    window = build_window(build_services(models, engine=FakeEngine()), LoadSettings(n_threads=2, n_ctx=8192))
    window.show()
    window.start(select=min(models.glob("*.gguf"), default=None))
    load = window.features.load
    settle_until(app, lambda: load.plan is not None, "the selected model's plan")
    planned: list[object] = []
    load.planned.connect(planned.append)
    window.plan_panel.select_target("v100-16gb")  # a plan with a bar, a verdict and advice
    window.resize(width, height)
    settle_until(app, lambda: bool(planned) and bool(window.plan_panel.bars), "the plan for a V100")
    window.grab().save(png)
    window.params.grab().save(png.removesuffix(".png") + "-settings.png")  # the part that scrolls, whole
    plan = window.plan_panel
    report_data = {
        "size": [window.width(), window.height()],
        "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
        "bar_in_view": bool(plan.bars) and plan.bars[0].isVisible() and inside(plan.bars[0], window),
        "verdict_in_view": plan.verdict_label.isVisible() and inside(plan.verdict_label, window),
    }
    # Every tab, as the user would open it: nothing cut, nothing out of reach, the window no wider.
    clipped_texts: list[str] = []
    outside: list[str] = []
    pages: list[tuple[int, QTabWidget | None, int, str]] = []  # a tab, and each page of a tab that has pages
    for index in range(window.tabs.count()):
        tab = window.tabs.tabText(index).replace("&", "")
        inner = window.tabs.widget(index)
        if isinstance(inner, QTabWidget):
            pages += [(index, inner, page, f"{tab} / {inner.tabText(page)}") for page in range(inner.count())]
        else:
            pages.append((index, None, 0, tab))
    for index, inner, page, tab in pages:
        window.tabs.setCurrentIndex(index)
        if inner is not None:
            inner.setCurrentIndex(page)
        settle(app, 0.3)
        if index or page:
            name = "-".join(part.split()[0].lower() for part in tab.split(" / "))
            window.grab().save(png.removesuffix(".png") + f"-{name}.png")
        for widget in window.findChildren(QWidget):
            if not widget.isVisible() or widget.window() is not window:
                continue
            if (why := clipped(widget)) is not None:
                name = widget.accessibleName() or widget.objectName() or type(widget).__name__
                clipped_texts.append(f"[{tab}] {name} ({type(widget).__name__}) {widget.text()[:40]!r}: {why}")  # type: ignore[attr-defined]
            if isinstance(widget, QAbstractButton) and not inside(widget, window):
                outside.append(f"[{tab}] {widget.text()}")
        if window.width() != width:
            outside.append(f"[{tab}] the window grew to {window.width()} px")
    report_data |= {"clipped": sorted(set(clipped_texts)), "buttons_outside": sorted(set(outside))}
    Path(report).write_text(json.dumps(report_data, indent=2))
    window.close()


if __name__ == "__main__":
    main()
