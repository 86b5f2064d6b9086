"""Guards against a Qt binding that would crash the app hours into a chat."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class Emitter(QObject):
    fired = Signal(object)


def test_signal_emit_keeps_reference_counts(qapp) -> None:
    # PySide6 6.12.0 dropped a reference to True on every emit; a streamed reply emits per token
    # and the interpreter aborted at exit. pyproject.toml keeps that release out.
    emitter = Emitter()
    received: list[object] = []
    emitter.fired.connect(received.append)
    before = sys.getrefcount(True)
    for i in range(500):
        emitter.fired.emit(i)
    assert len(received) == 500
    assert sys.getrefcount(True) >= before - 5
