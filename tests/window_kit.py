"""Opening the real window in a test: the services from the composition root (gui.app.build_services),
with whatever a test swaps in (a fake engine, fake NVML, its own stores or hub)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gui.app import build_services
from gui.core.params import LoadSettings
from gui.ui.compose import build_window
from gui.ui.main_window import MainWindow

TIMEOUT = 120_000


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
