"""Render docs/theme-light.png and docs/theme-dark.png: the window on the demo model in each palette, the
Monitor tab above and the Chat tab (a real reply from the demo model, with its code) below.

The engine is the real one on models/SmolLM2-135M-Instruct.Q4_1.gguf; the card is the app's simulated V100
(`--simulate v100-16gb`) on a virtual clock, so five minutes of readings take a moment to draw. One window
is shot twice: the second picture is the first one's window switched to the other theme while it runs.

    .venv/bin/python docs/theme_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Its own settings and history: never the user's.
_HOME = tempfile.mkdtemp(prefix="tightfit-shots-")
for _var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
    os.environ[_var] = os.path.join(_HOME, _var.lower())
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtGui import QPainter, QPixmap  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gui.app import build_services  # noqa: E402
from gui.core.cards import CARDS  # noqa: E402
from gui.core.params import LoadSettings  # noqa: E402
from gui.core.simulated_gpu import SimulatedGpu  # noqa: E402
from gui.core.theme import ThemeChoice  # noqa: E402
from gui.services.bundle import GpuServices  # noqa: E402
from gui.services.telemetry import SimulatedSource  # noqa: E402
from gui.ui.compose import build_window  # noqa: E402
from gui.ui.i18n import install_language  # noqa: E402
from gui.ui.main_window import MainWindow  # noqa: E402
from gui.ui.theme import theme  # noqa: E402

DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "Write a Python function that adds two numbers. Reply with a code block."
SIZE = (1280, 860)


def wait(signal: Any, seconds: float = 300.0) -> None:
    loop = QEventLoop()
    signal.connect(lambda *_: loop.quit())
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


class VirtualClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def shoot(app: QApplication, window: MainWindow) -> QPixmap:
    """The Monitor tab above the Chat tab, as one picture."""
    shots = []
    for tab in (1, 0):
        window.tabs.setCurrentIndex(tab)
        for _ in range(5):
            app.processEvents()
        shots.append(window.grab())
    width = max(s.width() for s in shots)
    picture = QPixmap(width, sum(s.height() for s in shots))
    painter = QPainter(picture)
    y = 0
    for shot in shots:
        painter.drawPixmap(0, y, shot)
        y += shot.height()
    painter.end()
    return picture


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs")
    if not DEMO.is_file():
        print(f"{DEMO} is missing: run `make demo-model`", file=sys.stderr)
        return 1
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setApplicationName("Tightfit")
    card = CARDS["v100-16gb"]
    clock = VirtualClock()
    services = build_services(DEMO.parent, card)
    source = SimulatedSource([SimulatedGpu(card.key)], clock=clock)
    services = dataclasses.replace(services, gpu=GpuServices.create(source, clock=clock))
    install_language("en")  # as the application does at start (the English plural forms)
    theme().set_choice(ThemeChoice.LIGHT)
    window = build_window(services, LoadSettings(n_threads=2, n_ctx=2048))
    window.resize(*SIZE)
    window.show()
    window.start(select=DEMO)
    wait(window.features.machine.gpus_found)
    if window.picker.current() is None:  # the library's first scan runs off the UI thread: it may come later
        wait(window.picker.scanned)
    if not window.features.session.state.busy:
        window.features.load.load_selected()
    wait(window.features.load.load_finished)
    window.chat.sampling_panel.preset.setCurrentText("Deterministic")
    window.chat.max_tokens = 120
    window.chat.input.setPlainText(PROMPT)
    window.chat.send()
    wait(window.chat.reply_finished)

    monitor = window.monitor
    monitor.bridge.stop()  # the readings below are the picture's, on the virtual clock

    def run(seconds: int, tok_s: float) -> None:
        monitor.set_engine_rate(tok_s)
        for _ in range(seconds):
            clock.t += 1.0
            monitor.sample_now()

    run(30, 0.0)
    run(240, 64.0)  # a long job at full power
    run(30, 0.0)
    monitor.charts.redraw()

    written = []
    for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
        theme().set_choice(choice)
        path = out / f"theme-{choice.value}.png"
        if shoot(app, window).save(str(path)):
            written.append(str(path))
    window.close()
    print("written:", ", ".join(written))
    return 0 if len(written) == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
