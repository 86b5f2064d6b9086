"""Composition root of the window: builds the services, hands them to the window, runs the Qt event loop.

Start-up work (first scan, engine hello, optional --load and --prompt) is orchestrated as one asyncio
task on the qasync loop; --screenshot waits for it to settle, saves the window, and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import logging
import os
import sys
import traceback
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from gui.core.words import english_error

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gui.core.cards import Card
    from gui.services.bundle import Services

log = logging.getLogger("tightfit")
SETTLE_TIMEOUT_S = 300
# The window's tabs in order, by the names `--tab` takes.
TABS = ("chat", "monitor", "quants", "doctor", "journey", "tune", "serve")


def _prepare_environment(offscreen: bool) -> None:
    if offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif sys.platform.startswith("linux") and _needs_xcb() and (missing := _xcb_plugin_problem()):
        # Qt aborts with a misleading "reinstall the application" message; say what to install instead.
        raise SystemExit(
            f"tightfit: error: Qt cannot open a window on X11: {missing}. On Debian/Ubuntu install: sudo apt "
            "install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 "
            "libxkbcommon-x11-0 (or run under Wayland)"
        )
    # pyqtgraph and Qt pick the binding from this; the project uses PySide6 only.
    os.environ.setdefault("QT_API", "pyside6")


def signal_future(signal: Any) -> asyncio.Future[Any]:
    """A future resolved by the next emission of a Qt signal (its first argument, if any).

    It connects at once, not when first awaited, so an emission that comes before the await is kept.
    """
    future: asyncio.Future[Any] = asyncio.get_event_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args[0] if args else None)

    signal.connect(fire)
    future.add_done_callback(lambda _: signal.disconnect(fire))
    return future


def _xcb_plugin_problem() -> str:
    """Why Qt's X11 plugin cannot load ('' if it can): the dynamic loader names the missing library."""
    try:
        import PySide6
    except ImportError:
        return ""
    plugin = os.path.join(os.path.dirname(PySide6.__file__), "Qt", "plugins", "platforms", "libqxcb.so")
    if not os.path.exists(plugin):
        return ""
    try:
        ctypes.CDLL(plugin)
    except OSError as exc:
        return f"{english_error(exc).split(':', 1)[0]} is missing"  # "libxcb-icccm.so.4: cannot open shared object…"
    return "" if ctypes.util.find_library("xcb-cursor") else "libxcb-cursor.so.0 is missing"


def _needs_xcb() -> bool:
    """Whether Qt will pick its X11 plugin: no platform chosen and no Wayland session to use instead."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.startswith("xcb")
    return not os.environ.get("WAYLAND_DISPLAY")


async def wait_signal(signal: Any, timeout: float) -> Any:
    return await asyncio.wait_for(signal_future(signal), timeout)


async def start_up(window: Any, args: argparse.Namespace) -> None:
    """Wait for the engine and the first scan; then --load and --prompt if asked."""

    features = window.features
    ready = signal_future(features.engine.engine_ready)
    scanned = signal_future(window.picker.scanned)
    gpus = signal_future(features.machine.gpus_found)
    ram = signal_future(features.machine.ram_measured)
    window.start(select=args.model.resolve() if args.model else None)
    await asyncio.wait_for(asyncio.gather(ready, scanned, gpus, ram), SETTLE_TIMEOUT_S)
    if not (args.load or args.prompt):
        return
    if window.picker.current() is None:
        window.load_bar.say(f"Nothing to load: no usable GGUF file in {window.picker.folder}")
        return
    outcome = signal_future(features.load.load_finished)
    features.load.load_selected()
    if not features.session.state.busy and not outcome.done():
        outcome.cancel()
        return  # nothing was sent (the plan said it will not fit, or the settings are wrong): the window says why
    if not await asyncio.wait_for(outcome, SETTLE_TIMEOUT_S):
        return  # the window already says why
    if args.prompt:
        window.chat.input.setPlainText(args.prompt)
        finished = signal_future(window.chat.reply_finished)
        window.chat.send()
        await asyncio.wait_for(finished, SETTLE_TIMEOUT_S)


def install_excepthook(parent: Any) -> None:
    """One place for unexpected errors: log them and show a dialog instead of dying silently."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, exc, tb))
        log.error("unexpected error\n%s", text)
        if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
            sys.stderr.write(text)
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Tightfit: unexpected error", "", parent=parent)
        box.setTextFormat(Qt.TextFormat.PlainText)  # the message may quote a file, a server or a model
        box.setText(english_error(exc))
        box.setDetailedText(text)
        box.open()

    sys.excepthook = hook


def set_identity(app: Any) -> None:
    """Name and icon for the window, the taskbar and the tray; the desktop file name ties the windows to the
    menu entry `tightfit install-desktop` writes (X11 matches its StartupWMClass to the application name)."""
    from PySide6.QtGui import QIcon

    from gui.services.desktop import APP_ID, APP_NAME, icon_files

    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    icon = QIcon()
    for path in icon_files().values():
        if path.is_file():
            icon.addFile(str(path))
    app.setWindowIcon(icon)


def build_services(
    models_dir: Path,
    simulate: Card | Sequence[Card] | None = None,
    *,
    engine: Any = None,
    nvml: Any = None,
    store: Any = None,
    history: Any = None,
    hub: Any = None,
    journey: Any = None,
    measure_ram: Any = None,
) -> Services:
    """Every service the window uses, built once, here. Tests pass their own engine, NVML, stores, hub or RAM
    bandwidth reading.
    ``simulate``: the simulated card, or cards (GPU 0, 1, ... in that order), planned for and watched."""
    from gui.core.simulated_gpu import SimulatedGpu
    from gui.services.bundle import GpuServices, Services, doctor_checks
    from gui.services.engine_client import EngineClient
    from gui.services.history import HistoryStore
    from gui.services.hub import HubClient
    from gui.services.journey import JourneyStore
    from gui.services.library import Library
    from gui.services.settings_store import SettingsStore
    from gui.services.telemetry import SimulatedSource

    settings = store or SettingsStore(write_behind=True)
    extra = [Path(f) for f in settings.model_folders if Path(f) != models_dir]
    from gui.core import cards as catalog

    cards = (simulate,) if isinstance(simulate, catalog.Card) else tuple(simulate or ())
    simulated = SimulatedSource([SimulatedGpu(c.key, index=i) for i, c in enumerate(cards)]) if cards else None
    gpu = GpuServices.create(simulated, nvml=nvml)
    return Services(
        models_dir=models_dir,
        engine=engine or EngineClient(),
        gpu=gpu,
        library=Library([models_dir, *extra]),
        history=history or HistoryStore(),
        settings=settings,
        hub=hub or HubClient(),
        journey=journey or JourneyStore(),
        simulated=cards,
        doctor=partial(doctor_checks, simulated=cards[0] if cards else None, nvml=gpu.nvml),
        **({"measure_ram": measure_ram} if measure_ram is not None else {}),
    )


def run_gui(args: argparse.Namespace, settings: Any, models_dir: Path, simulate: Sequence[Card] = ()) -> int:
    _prepare_environment(offscreen=args.screenshot is not None)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import qasync
    from PySide6.QtWidgets import QApplication

    from gui.ui.compose import build_window
    from gui.ui.main_thread_gc import MainThreadGc

    app = QApplication.instance() or QApplication(sys.argv[:1])
    set_identity(app)
    MainThreadGc(app).start()  # Qt objects in cycles are destroyed on this thread, never on a worker's
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    services = build_services(models_dir, simulate)
    _apply_theme(services.settings)
    _apply_language(services.settings)
    from gui.commands.flags import given_values
    from gui.core.params import LOAD_SPECS

    window = build_window(services, settings, given_values(args, LOAD_SPECS))
    window.tabs.setCurrentIndex(TABS.index(getattr(args, "tab", "chat")))
    install_excepthook(window)
    if args.screenshot is not None:
        window.resize(1280, 900)  # the picture's size, whatever the offscreen screen's
    window.show()
    status = 0

    async def main_task() -> None:
        nonlocal status
        try:
            await start_up(window, args)
        except TimeoutError:
            log.warning("start-up did not settle within %s s", SETTLE_TIMEOUT_S)
            status = 1
        if args.screenshot is not None:
            await asyncio.sleep(0.3)  # debounced work (the quant table) and the last repaints
            app.processEvents()
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            if not window.grab().save(str(args.screenshot)):
                print(f"tightfit: error: could not write {args.screenshot}", file=sys.stderr)
                status = 1
            window.close()
            app.quit()

    with loop:
        task = loop.create_task(main_task())  # keep a reference: the loop holds tasks weakly
        app.aboutToQuit.connect(window.close)
        loop.run_until_complete(_run_until_closed(app, task))
    return status


def _apply_theme(store: Any) -> None:
    """The light/dark choice kept from last time, applied before the first widget is built."""
    from gui.core.preferences import THEME
    from gui.ui.theme import theme

    theme().set_choice(store.read(THEME))


def _apply_language(store: Any) -> None:
    """The window's language (the system's, or the one chosen), installed before the first widget is built."""
    from gui.core.preferences import LANGUAGE
    from gui.ui.i18n import install_language

    install_language(store.read(LANGUAGE))


async def _run_until_closed(app: Any, task: asyncio.Task[None]) -> None:
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def window_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    app.lastWindowClosed.connect(window_closed)
    await closed
    if not task.done():
        task.cancel()
