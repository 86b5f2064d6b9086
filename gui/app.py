"""Composition root of the window: builds the services and widgets and runs the Qt event loop.

Start-up work (first scan, engine hello, optional --load and --prompt) is orchestrated as one asyncio
task on the qasync loop; --screenshot waits for it to settle, saves the window, and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

log = logging.getLogger("tightfit")
SETTLE_TIMEOUT_S = 300


def _prepare_environment(offscreen: bool) -> None:
    if offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    # pyqtgraph and Qt pick the binding from this; the project uses PySide6 only.
    os.environ.setdefault("QT_API", "pyside6")


async def wait_signal(signal: Any, timeout: float) -> Any:
    """Resolve with the first emission of a Qt signal (its first argument, if any)."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args[0] if args else None)

    signal.connect(fire)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(fire)


async def start_up(window: Any, args: argparse.Namespace) -> None:
    """Wait for the engine and the first scan; then --load and --prompt if asked."""
    from gui.core import protocol as p

    ready = wait_signal(window.engine_ready, SETTLE_TIMEOUT_S)
    scanned = wait_signal(window.picker.scanned, SETTLE_TIMEOUT_S)
    window.start(select=args.model.resolve() if args.model else None)
    await asyncio.gather(ready, scanned)
    if not (args.load or args.prompt):
        return
    if window.picker.current() is None:
        window.load_status.setText(f"Nothing to load: no usable GGUF file in {window.picker.folder}")
        return
    loaded = asyncio.ensure_future(wait_signal(window.model_loaded, SETTLE_TIMEOUT_S))
    failed = asyncio.ensure_future(wait_signal(window.bridge.event, SETTLE_TIMEOUT_S))
    window.load_selected()
    while not loaded.done():
        await asyncio.wait({loaded, failed}, return_when=asyncio.FIRST_COMPLETED)
        if failed.done():
            if isinstance(failed.result(), p.LoadFailed):
                loaded.cancel()
                return
            failed = asyncio.ensure_future(wait_signal(window.bridge.event, SETTLE_TIMEOUT_S))
    failed.cancel()
    if args.prompt:
        window.chat.input.setPlainText(args.prompt)
        finished = wait_signal(window.chat.reply_finished, SETTLE_TIMEOUT_S)
        window.chat.send()
        await finished


def install_excepthook(parent: Any) -> None:
    """One place for unexpected errors: log them and show a dialog instead of dying silently."""
    from PySide6.QtWidgets import QMessageBox

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, exc, tb))
        log.error("unexpected error\n%s", text)
        if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
            sys.stderr.write(text)
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Tightfit: unexpected error", str(exc), parent=parent)
        box.setDetailedText(text)
        box.open()

    sys.excepthook = hook


def run_gui(args: argparse.Namespace, settings: Any, models_dir: Path) -> int:
    _prepare_environment(offscreen=args.screenshot is not None)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import qasync
    from PySide6.QtWidgets import QApplication

    from gui.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Tightfit")
    app.setOrganizationName("Tightfit")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    window = MainWindow(models_dir, settings)
    install_excepthook(window)
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


async def _run_until_closed(app: Any, task: asyncio.Task[None]) -> None:
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    app.lastWindowClosed.connect(lambda: closed.done() or closed.set_result(None))
    await closed
    if not task.done():
        task.cancel()
