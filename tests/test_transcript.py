"""The transcript lays out only what changed, a few blocks per pass, and keeps streamed text apart."""

from __future__ import annotations

from pathlib import Path

from fake_engine import FakeEngine
from window_kit import TIMEOUT, load, open_window

from gui.ui.transcript import Transcript, TurnView


def turn(key: str, *texts: str) -> TurnView:
    return TurnView(key, tuple(f"<p>{t}</p>" for t in texts))


def settle(qtbot, view: Transcript) -> None:
    qtbot.waitUntil(lambda: view.pending == 0, timeout=10_000)


def test_turns_already_shown_are_left_alone(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.show_turns([turn("a", "first"), turn("b", "second")])
    settle(qtbot, view)
    first_block = view.document().firstBlock()
    view.show_turns([turn("a", "first"), turn("b", "second"), turn("c", "third")])
    settle(qtbot, view)
    assert view.toPlainText().split("\n") == ["first", "second", "third"]
    assert view.document().firstBlock() == first_block  # not laid out again
    # An edited turn replaces it and everything after it.
    view.show_turns([turn("a", "first"), turn("b2", "changed")])
    settle(qtbot, view)
    assert view.toPlainText().split("\n") == ["first", "changed"]
    view.show_turns([], "<p>empty</p>")
    assert view.toPlainText() == "empty"


def test_streamed_text_is_replaced_by_the_finished_turn(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.show_turns([turn("q", "question"), turn("heading", "Model")])
    view.begin_stream()
    view.stream("partial ")
    view.stream("answer")
    assert view.toPlainText().endswith("Model\npartial answer")
    view.show_turns([turn("q", "question"), turn("done", "Model", "the whole answer")])
    settle(qtbot, view)
    assert view.toPlainText().split("\n") == ["question", "Model", "the whole answer"]


def test_a_line_that_never_ends_is_streamed_in_bounded_blocks(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.begin_stream()
    for _ in range(3000):
        view.stream("again ")
    blocks = [view.document().findBlockByNumber(i).length() for i in range(view.document().blockCount())]
    assert max(blocks) <= 2_100  # Qt lays a block out again as it grows: none grows without bound
    assert view.toPlainText().replace("\n", "") == "again " * 3000


def test_a_long_reply_is_laid_out_over_several_passes(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    pieces = tuple(f"<p>paragraph {i} " + "word " * 200 + "</p>" for i in range(400))
    view.show_turns([TurnView("long", pieces)])
    assert 0 < view.pending < 400  # the first pass did part of it, within its budget
    settle(qtbot, view)
    assert view.toPlainText().count("paragraph") == 400


def test_a_long_reply_shows_as_plain_text_then_as_markdown(qtbot, demo_model: Path) -> None:
    reply = "**bold** " + "word " * 3000 + "\n\n```python\nx = 1\n```"
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine(reply=reply))
    load(qtbot, win)
    win.chat.max_tokens = 5000
    win.chat.input.setPlainText("go")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    # Rendered on a worker thread, then shown again: bold is bold and the code is a code block.
    qtbot.waitUntil(lambda: not win.chat._rendering and win.chat.transcript.pending == 0, timeout=TIMEOUT)
    html = win.chat.transcript.toHtml()
    assert "**bold**" not in win.chat.transcript.toPlainText() and "font-weight:700" in html
    assert "x = 1" in win.chat.transcript.toPlainText() and "```" not in win.chat.transcript.toPlainText()
    win.close()
