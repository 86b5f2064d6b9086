"""The one way the window runs work off the UI thread: results and errors come back on the UI thread."""

from __future__ import annotations

import threading

from gui.ui.background import Background


def test_results_and_errors_arrive_on_the_ui_thread(qtbot) -> None:
    background = Background("test")
    ui = threading.get_ident()
    seen: list[tuple[str, object, int]] = []
    background.run(threading.get_ident, lambda worker: seen.append(("then", worker != ui, threading.get_ident())))
    background.run(lambda: 1 / 0, None, lambda exc: seen.append(("failed", type(exc).__name__, threading.get_ident())))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=5000)
    assert ("then", True, ui) in seen  # the job ran elsewhere; the answer came back here
    assert ("failed", "ZeroDivisionError", ui) in seen
    background.shutdown(wait=True)


def test_latest_drops_older_answers_for_the_same_key(qtbot) -> None:
    background = Background("test")
    gate = threading.Event()
    shown: list[str] = []
    background.latest("rows", lambda: gate.wait(5) and "old", shown.append)
    background.latest("rows", lambda: "new", shown.append)
    background.latest("other", lambda: "other", shown.append)
    gate.set()
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5000)
    background.run(lambda: None, lambda _: shown.append("done"))
    qtbot.waitUntil(lambda: "done" in shown, timeout=5000)
    assert sorted(shown) == ["done", "new", "other"]  # "old" finished, and was dropped
    background.shutdown(wait=True)


def test_nothing_is_delivered_after_shutdown(qtbot) -> None:
    background = Background("test")
    gate = threading.Event()
    shown: list[object] = []
    background.run(lambda: gate.wait(5), shown.append)
    background.shutdown()
    gate.set()
    qtbot.wait(50)
    background.run(lambda: 1, shown.append)  # refused: the owner is gone
    qtbot.wait(50)
    assert shown == []
