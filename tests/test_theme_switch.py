"""The theme in the running window: switching Light -> Dark recolours a chart, the VRAM bar and a code block
(read back from the pixels drawn and the pens set), "System" follows the desktop's colour scheme signal,
and the choice is kept as a preference."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMainWindow

from gui.core.params import LoadSettings
from gui.core.planner import DevicePlan, Verdict
from gui.core.preferences import THEME
from gui.core.telemetry_history import TelemetryHistory
from gui.core.theme import DARK, LIGHT, ThemeChoice
from gui.services.settings_store import SettingsStore
from gui.ui.charts import TelemetryCharts
from gui.ui.theme import ThemeBox, current_palette, install_theme_control, theme
from gui.ui.vram_bar import VramBar
from tests.fake_engine import FakeEngine
from tests.window_kit import load, open_window

TIMEOUT = 120_000


@pytest.fixture(autouse=True)
def back_to_system(qapp: QApplication) -> Iterator[None]:
    """Every test starts and ends on "System" with the offscreen desktop's (unknown, light) scheme."""
    hints = QGuiApplication.styleHints()
    theme().set_choice(ThemeChoice.SYSTEM)
    yield
    theme().set_choice(ThemeChoice.LIGHT)  # leave "System" from a palette of our own, as the app would
    hints.colorSchemeChanged.emit(hints.colorScheme())
    theme().set_choice(ThemeChoice.SYSTEM)
    assert current_palette() is LIGHT


def _device(verdict: Verdict = Verdict.FITS) -> DevicePlan:
    return DevicePlan(
        name="Tesla V100-SXM2-16GB", total_mib=16_384, free_mib=16_000, other_mib=384, weights_mib=6_000,
        kv_mib=2_000, recurrent_mib=0, compute_mib=500, staged_mib=0, output_mib=50, overhead_mib=400,
        needed_mib=8_950, free_after_mib=7_050, margin_mib=1_024, verdict=verdict, layers=32, has_output=True,
    )  # fmt: skip


def _pixel(widget: object, x: int, y: int) -> str:
    return str(widget.grab().toImage().pixelColor(x, y).name())  # type: ignore[attr-defined]


def test_light_to_dark_recolours_a_chart_and_the_vram_bar(qtbot) -> None:
    theme().set_choice(ThemeChoice.LIGHT)
    charts = TelemetryCharts(TelemetryHistory())
    bar = VramBar()
    bar.set_plan(_device())
    for widget in (charts, bar):
        qtbot.addWidget(widget)
    charts.resize(800, 600)
    bar.resize(400, 46)
    charts.show()
    bar.show()
    plot = charts.plots["temperature"]
    track_at = (bar.width() - 4, bar.height() // 2)  # past the segments, inside the margin's gaps
    weights_at = next(
        x for x in range(bar.width()) if _pixel(bar, x, bar.height() // 2) == LIGHT.segments["weights_mib"]
    )

    def look() -> dict[str, str]:
        return {
            "background": _pixel(plot, 2, 2),
            "curve": charts.curves["temperature_c"].opts["pen"].color().name(),
            "limit line": charts.curves["power_limit_w"].opts["pen"].color().name(),
            "axis": plot.getPlotItem().getAxis("left").pen().color().name(),
            "slowdown": charts.slowdown_line.pen.color().name(),
            "weights": _pixel(bar, weights_at + 1, bar.height() // 2),
            "window": QApplication.palette().color(QPalette.ColorRole.Window).name(),
        }

    light = look()
    assert light == {
        "background": LIGHT.chart_background,
        "curve": LIGHT.series["temperature_c"],
        "limit line": LIGHT.series["power_limit_w"],
        "axis": LIGHT.chart_axis,
        "slowdown": LIGHT.slowdown_line,
        "weights": LIGHT.segments["weights_mib"],
        "window": LIGHT.window,
    }
    light_track = _pixel(bar, *track_at)

    with qtbot.waitSignal(theme().changed, timeout=1000) as changed:
        theme().set_choice(ThemeChoice.DARK)
    assert changed.args == [DARK]
    assert look() == {
        "background": DARK.chart_background,
        "curve": DARK.series["temperature_c"],
        "limit line": DARK.series["power_limit_w"],
        "axis": DARK.chart_axis,
        "slowdown": DARK.slowdown_line,
        "weights": DARK.segments["weights_mib"],
        "window": DARK.window,
    }
    # The track under the margin's hatching: lighter hatching on a dark track now, darker on a light one.
    assert QColor(_pixel(bar, *track_at)).lightness() < 128 < QColor(light_track).lightness()
    assert QApplication.style().name().lower() == "fusion"


def test_system_follows_the_desktops_colour_scheme(qtbot) -> None:
    assert theme().choice is ThemeChoice.SYSTEM
    charts = TelemetryCharts(TelemetryHistory())
    qtbot.addWidget(charts)
    charts.resize(600, 400)
    charts.show()
    hints = QGuiApplication.styleHints()
    with qtbot.waitSignal(theme().changed, timeout=1000):
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # what Qt emits when the desktop turns dark
    assert current_palette() is DARK
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
    assert _pixel(charts.plots["power"], 2, 2) == DARK.chart_background
    with qtbot.waitSignal(theme().changed, timeout=1000):
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert current_palette() is LIGHT
    assert _pixel(charts.plots["power"], 2, 2) == LIGHT.chart_background
    # An explicit choice is not overridden by the desktop.
    theme().set_choice(ThemeChoice.LIGHT)
    with qtbot.assertNotEmitted(theme().changed):
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert current_palette() is LIGHT


def test_the_choice_is_kept_and_restored(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path)
    box = ThemeBox(store)
    qtbot.addWidget(box)
    assert box.currentText() == "System"
    box.activated.emit(box.findText("Dark"))  # as a click on "Dark" does
    assert theme().choice is ThemeChoice.DARK and current_palette() is DARK
    assert json.loads(path.read_text())["theme"] == "dark"
    theme().set_choice(ThemeChoice.SYSTEM)
    assert box.currentText() == "System"  # the box shows a change made elsewhere

    window = QMainWindow()
    qtbot.addWidget(window)
    restored = install_theme_control(window, SettingsStore(path))
    assert theme().choice is ThemeChoice.DARK and restored.currentText() == "Dark"
    # A hand-edited value that is no choice falls back to the default.
    path.write_text(json.dumps({"theme": "purple"}))
    assert SettingsStore(path).read(THEME) is ThemeChoice.SYSTEM


def test_a_code_block_in_a_reply_is_drawn_in_the_themes_style(qtbot, demo_model: Path) -> None:
    theme().set_choice(ThemeChoice.LIGHT)
    engine = FakeEngine(reply="Here:\n\n```python\nvalue = 1\nother = 2\nthird = 3\n```\n")
    win = open_window(qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=2, n_ctx=1024), engine=engine)
    win.plan_panel.select_target("cpu")
    load(qtbot, win)
    win.resize(1100, 800)
    win.chat.input.setPlainText("code please")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    transcript = win.chat.transcript

    def code_pixels(colour: str) -> int:
        image = transcript.viewport().grab().toImage()
        wanted = QColor(colour)
        step = 3
        return sum(
            image.pixelColor(x, y) == wanted
            for x in range(0, image.width(), step)
            for y in range(0, image.height(), step)
        )

    light_bg = "#f8f8f8"  # Pygments' "default" style, LIGHT.code.style
    dark_bg = "#272822"  # "monokai", DARK.code.style
    assert LIGHT.code.style == "default" and DARK.code.style == "monokai"
    assert code_pixels(light_bg) > 50 and code_pixels(dark_bg) == 0
    theme().set_choice(ThemeChoice.DARK)
    # The reply is laid out again piece by piece: once it is, the code is dark and nothing light is left.
    qtbot.waitUntil(lambda: code_pixels(dark_bg) > 50 and code_pixels(light_bg) == 0, timeout=5000)
    # The turn headings follow too.
    assert DARK.assistant in transcript.toHtml() and LIGHT.assistant not in transcript.toHtml()
    win.close()
