"""The Monitor tab on its own, for its tests: a fake clock the tests step (the fixtures ``clock`` and
``make_view`` that build views on it live in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

from gui.ui.monitor import MonitorView

MakeView = Callable[..., MonitorView]


class FakeClock:
    def __init__(self, start: float = 5_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t
