"""Render docs/monitor.png: the monitor on a simulated V100 through a 20-minute run, capped at 200 W halfway.

The card is the app's own simulated V100 (`--simulate v100-16gb`), advanced on a virtual clock one
second per tick so twenty minutes take a second to draw; the engine is reported busy throughout, as a
long batch job would keep it. The cap goes through the same power panel the window shows.

    .venv/bin/python docs/monitor_screenshot.py [docs/monitor.png]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from gui.core.simulated_gpu import SimulatedGpu
from gui.services.bundle import GpuServices
from gui.services.telemetry import SimulatedSource
from gui.ui.monitor import MonitorView


class VirtualClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/monitor.png")
    app = QApplication.instance() or QApplication([])
    clock = VirtualClock()
    source = SimulatedSource([SimulatedGpu("v100-16gb")], clock=clock)
    view = MonitorView(GpuServices.create(source, clock=clock))
    view.resize(760, 820)
    view.show()

    def run(seconds: int, tok_s: float) -> None:
        view.set_engine_rate(tok_s)
        for _ in range(seconds):
            clock.t += 1.0
            view.sample_now()

    run(60, 0.0)  # idle before the job
    run(540, 64.0)  # a long job at full power
    view.cap_watts = 200
    view.power_panel.apply_cap()
    while view.power_panel.busy:
        app.processEvents()
    run(600, 61.0)  # capped: a little slower, much cooler
    app.processEvents()
    view.charts.set_window(25 * 60)  # the whole run, not just the last five minutes
    view.charts.redraw()
    app.processEvents()
    ok = view.grab().save(str(out))
    view.stop()
    view.close()
    print(f"{out}: {'written' if ok else 'FAILED'}; {view.power_panel.outcome_text()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
