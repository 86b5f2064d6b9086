"""Settings named on the command line (`tightfit --model M --load --ctx 2048`) win over what the model selected
at start remembers from its last load; the rest of what it remembers stays, and later choices load as they last
did."""

from __future__ import annotations

from pathlib import Path

from fake_engine import FakeEngine
from window_kit import TIMEOUT

from gui.app import build_services
from gui.cli import build_parser
from gui.commands.flags import given_values, settings_from_args
from gui.core.params import LOAD_SPECS, LoadSettings
from gui.core.preferences import LAST_SETTINGS
from gui.services.settings_store import SettingsStore
from gui.ui.compose import build_window
from gui.ui.main_window import MainWindow


def _window(qtbot, demo_model: Path, store: SettingsStore, argv: list[str]) -> MainWindow:
    args = build_parser().parse_args(argv)
    settings = settings_from_args(args)
    win = build_window(
        build_services(demo_model.parent, engine=FakeEngine(), store=store), settings, given_values(args, LOAD_SPECS)
    )
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals(
        [win.features.engine.engine_ready, win.picker.scanned, win.features.machine.gpus_found], timeout=TIMEOUT
    ):
        win.start(select=demo_model)
    return win


def test_the_command_line_wins_over_the_remembered_settings(qtbot, demo_model: Path, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    remembered = LoadSettings(n_threads=1, n_ctx=512, n_batch=256, n_ubatch=128)
    store.write(LAST_SETTINGS, {demo_model.name: remembered})
    win = _window(qtbot, demo_model, store, ["--model", str(demo_model), "--ctx", "2048", "--threads", "2"])
    shown = win.params.settings()
    assert (shown.n_ctx, shown.n_threads) == (2048, 2)  # as typed
    assert (shown.n_batch, shown.n_ubatch) == (256, 128)  # as remembered
    win.close()


def test_without_flags_the_model_loads_as_it_last_did(qtbot, demo_model: Path, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    remembered = LoadSettings(n_threads=1, n_ctx=512, n_batch=256, n_ubatch=128)
    store.write(LAST_SETTINGS, {demo_model.name: remembered})
    win = _window(qtbot, demo_model, store, ["--model", str(demo_model)])
    assert win.params.settings().n_ctx == 512 and win.params.settings().n_threads == 1
    win.close()


def test_flags_that_do_not_go_with_the_remembered_ones_are_taken_whole(qtbot, demo_model: Path, tmp_path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.write(LAST_SETTINGS, {demo_model.name: LoadSettings(n_threads=1, n_ctx=512, n_batch=256, n_ubatch=128)})
    argv = ["--ubatch", "512", "--threads", "2"]  # a micro-batch past the remembered batch of 256
    win = _window(qtbot, demo_model, store, argv)
    typed, shown = settings_from_args(build_parser().parse_args(argv)), win.params.settings()
    assert shown.n_ubatch == 512 and shown.n_batch == typed.n_batch >= 512 and shown.n_ctx == typed.n_ctx != 512
    win.close()
