"""Test setup: Qt offscreen, the demo model, and a check that no test leaves a window open."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="session")
def demo_model() -> Path:
    if not DEMO_MODEL.is_file():
        pytest.fail(f"{DEMO_MODEL} is missing: run `make test`, which fetches it, or `tightfit fetch-demo`")
    return DEMO_MODEL


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
