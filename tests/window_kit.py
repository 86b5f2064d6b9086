"""Opening the real window in a test: the services from the composition root (gui.app.build_services),
with whatever a test swaps in (a fake engine, fake NVML, its own stores or hub). The RAM bandwidth is a reading
recorded on a 2-core machine unless a test asks for the real measurement (``measure_ram=measure_ram_bandwidth_gbs``):
measuring copies 256 MiB three times on every window's start, a second of both cores that no other test needs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gui.app import build_services
from gui.core.params import LoadSettings
from gui.ui.compose import build_window
from gui.ui.main_window import MainWindow

TIMEOUT = 120_000
RECORDED_RAM_GBS = 25.8  # gui.services.system.measure_ram_bandwidth_gbs() on a 2-core machine


def open_window(
    qtbot: Any,
    folder: Path,
    select: Path | None = None,
    settings: LoadSettings | None = None,
    *,
    also: Callable[[MainWindow], Sequence[Any]] = lambda _win: (),
    **services: Any,
) -> MainWindow:
    """The window on ``folder``, shown and started; returns once the engine said hello, the first scan
    is in and the GPUs were looked for (plus any signals ``also`` names)."""
    services.setdefault("measure_ram", lambda: RECORDED_RAM_GBS)
    win = build_window(build_services(folder, **services), settings or LoadSettings(n_threads=2, n_ctx=1024))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals(
        [win.features.engine.engine_ready, win.picker.scanned, win.features.machine.gpus_found, *also(win)],
        timeout=TIMEOUT,
    ):
        win.start(select=select)
    return win


def load(qtbot: Any, win: MainWindow) -> Any:
    """Load the selected model and wait for it; returns the Loaded event."""
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT) as blocker:
        win.features.load.load_selected()
    return blocker.args[0]
