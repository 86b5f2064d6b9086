"""Test setup: Qt offscreen, the demo model, and a check that no test leaves a window open."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# The app keeps history, settings and logs under the XDG directories: the tests get their own, never the user's.
_SANDBOX = tempfile.mkdtemp(prefix="tightfit-tests-")
for _var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
    os.environ[_var] = os.path.join(_SANDBOX, _var.lower())
# Nor the user's Hugging Face token or system keyring: tests that need them set their own.
for _var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "HF_HUB_DISABLE_IMPLICIT_TOKEN", "HF_OIDC_RESOURCE"):
    os.environ.pop(_var, None)
os.environ["HF_TOKEN_PATH"] = os.path.join(_SANDBOX, "hf-token")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="session")
def demo_model() -> Path:
    if not DEMO_MODEL.is_file():
        pytest.fail(f"{DEMO_MODEL} is missing: run `make test`, which fetches it, or `tightfit fetch-demo`")
    return DEMO_MODEL


@pytest.fixture
def demo_folder(tmp_path: Path, demo_model: Path) -> Path:
    """A models folder holding the demo model alone (linked, not copied), for a window to scan."""
    models = tmp_path / "models"
    models.mkdir()
    (models / demo_model.name).symlink_to(demo_model)
    return models


@pytest.fixture(autouse=True)
def own_user_dirs(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each test starts with empty history, settings and logs, as a first run would."""
    home = tmp_path_factory.mktemp("user")
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    return home


@pytest.fixture(scope="session", autouse=True)
def cycles_collected_on_the_main_thread() -> Iterator[None]:
    """As in the app (gui/ui/main_thread_gc.py): the collector never runs on a worker thread, where destroying
    a Qt object left from an earlier test deadlocks against the main thread. Collected after every test, and
    on a timer while a test runs Qt's event loop."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def collect_due_garbage() -> Iterator[None]:
    from gui.ui.main_thread_gc import MainThreadGc, collect_due

    yield
    if gc.isenabled():  # a library run in-process turned it back on (mypy's api does): off again, as the app keeps it
        gc.disable()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None and app.findChild(MainThreadGc) is None:
        MainThreadGc(app).start()
    collect_due()


@pytest.fixture(autouse=True)
def no_leaked_windows(request: pytest.FixtureRequest):
    yield
    if "qtbot" not in request.fixturenames and "qapp" not in request.fixturenames:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    app.processEvents()
    leaked = [w for w in app.topLevelWidgets() if w.isVisible()]
    for widget in leaked:
        widget.close()
    assert not leaked, f"test left windows open: {[type(w).__name__ for w in leaked]}"


# ---- engine processes: only tests marked `engine` start one; the count is reported at the end ----

_engine_spawns: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    from gui.services import engine_client

    start = engine_client.EngineClient.start

    def counted_start(self: engine_client.EngineClient) -> None:
        was_alive = self.alive
        start(self)
        if not was_alive and self.alive:
            _engine_spawns.append(os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0])  # "nodeid (setup)"

    engine_client.EngineClient.start = counted_start  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def engine_tests_are_marked(request: pytest.FixtureRequest):
    """`-m "not engine"` must skip every test that starts the engine process here (CLI tests that start
    it in a subprocess are marked by hand). A spawn in a module fixture counts for the test it set up for."""
    yield
    if request.node.get_closest_marker("engine") is None and request.node.nodeid in _engine_spawns:
        pytest.fail(f"{request.node.nodeid} starts the engine process but is not marked `engine`", pytrace=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # a worker of `-n 2`: its count goes to the main one
    if workeroutput is not None:
        workeroutput["engine_spawns"] = list(_engine_spawns)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    _engine_spawns.extend(getattr(node, "workeroutput", {}).get("engine_spawns", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    files = sorted({name.split("::")[0] for name in _engine_spawns})
    terminalreporter.write_line(
        f"engine processes started by this run: {len(_engine_spawns)} (by {len(files)} test files)"
    )


@pytest.fixture
def clock() -> Any:
    """A clock the test steps by hand (tests/monitor_kit.py FakeClock), starting at 5,000 s."""
    from monitor_kit import FakeClock

    return FakeClock()


@pytest.fixture
def make_view(qtbot: Any, clock: Any) -> Iterator[Any]:
    """Monitor views on the fake clock (or another source and options), stopped when the test ends: their
    telemetry thread is joined before qtbot closes the widgets."""
    from gui.services.bundle import GpuServices
    from gui.ui.monitor import MonitorView

    views: list[Any] = []

    def make(source: Any = None, **kwargs: Any) -> Any:
        kwargs.setdefault("clock", clock)
        view = MonitorView(GpuServices.create(source, **kwargs))
        qtbot.addWidget(view)
        views.append(view)
        view.resize(740, 800)
        return view

    yield make
    for view in views:
        view.stop()
        assert not view.running
