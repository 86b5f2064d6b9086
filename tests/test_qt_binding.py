"""Guards against a Qt binding whose signals lose or keep references to what they carry.

The window emits once per streamed token, so one reference per emit adds up hours into a chat: a lost
one frees an object still in use (the interpreter aborts), a kept one grows memory without end.
PySide6 6.12.0's Signal.emit() lost a reference to True on every call; pyproject.toml keeps it out.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable

import pytest
from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

EMITS = 1000


class Emitter(QObject):
    fired = Signal(object)


class Payload:
    """A fresh object of its own: its count of references is its own to measure (True, None and small
    ints are immortal from Python 3.12 on, so their counts never move)."""


def refs_gained(emitter: Emitter, payload: object, deliver: Callable[[], None] = lambda: None) -> int:
    """How many references to ``payload`` EMITS emits (then ``deliver``) left behind."""
    gc.collect()
    before = sys.getrefcount(payload)
    for _ in range(EMITS):
        emitter.fired.emit(payload)
    deliver()
    gc.collect()
    return sys.getrefcount(payload) - before


def counter() -> tuple[list[int], Callable[[object], None]]:
    calls = [0]

    def slot(_payload: object) -> None:
        calls[0] += 1

    return calls, slot


def test_a_direct_emit_leaves_the_payload_as_it_found_it(qapp) -> None:
    emitter = Emitter()
    calls, slot = counter()
    emitter.fired.connect(slot)
    assert refs_gained(emitter, Payload()) == 0
    assert calls == [EMITS]


def test_a_queued_emit_holds_the_payload_until_delivered_then_lets_go(qapp) -> None:
    # The engine bridge hands tokens to the UI thread this way.
    emitter = Emitter()
    calls, slot = counter()
    emitter.fired.connect(slot, Qt.ConnectionType.QueuedConnection)
    payload = Payload()
    assert refs_gained(emitter, payload) == EMITS  # one per event still waiting in the queue
    QCoreApplication.sendPostedEvents()
    gc.collect()
    assert calls == [EMITS]
    assert refs_gained(emitter, payload, QCoreApplication.sendPostedEvents) == 0
    assert calls == [2 * EMITS]


def test_the_measurement_sees_a_slot_that_keeps_the_payload(qapp) -> None:
    # What a leaking binding would look like: one reference more per emit.
    emitter = Emitter()
    kept: list[object] = []
    emitter.fired.connect(kept.append)
    assert refs_gained(emitter, Payload()) == EMITS


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="True is immortal from Python 3.12 on: nothing to lose")
def test_emit_keeps_the_reference_count_of_true(qapp) -> None:
    emitter = Emitter()
    calls, slot = counter()
    emitter.fired.connect(slot)
    before = sys.getrefcount(True)
    for i in range(EMITS):
        emitter.fired.emit(i)
    assert calls == [EMITS]
    assert sys.getrefcount(True) >= before - 5
