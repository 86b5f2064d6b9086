"""The transcript lays out only what changed, a few blocks per pass, and keeps streamed text apart."""

from __future__ import annotations

from pathlib import Path

from fake_engine import FakeEngine
from window_kit import TIMEOUT, load, open_window

from gui.core.markdown_render import plain_blocks
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
    # The first turn takes the place of the words that stood in for an empty conversation.
    view.show_turns([turn("a", "first")], "<p>empty</p>")
    settle(qtbot, view)
    assert view.toPlainText() == "first"


def test_a_reply_being_written_keeps_its_settled_blocks_and_replaces_its_tail(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.show_turns([turn("q", "question"), turn("heading", "Model")])
    view.stream((), ("<p>partial</p>",))
    view.stream(("<p>first paragraph</p>",), ("<p>second, growing</p>",))
    first = view.document().findBlockByNumber(2)
    view.stream((), ("<p>second, grown more</p>",))
    assert view.toPlainText().split("\n") == ["question", "Model", "first paragraph", "second, grown more"]
    assert view.document().findBlockByNumber(2) == first  # the settled block was not laid out again
    view.show_turns([turn("q", "question"), turn("done", "Model", "the whole answer")])
    settle(qtbot, view)
    assert view.toPlainText().split("\n") == ["question", "Model", "the whole answer"]


def test_a_line_that_never_ends_is_laid_out_in_bounded_blocks(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.stream((), plain_blocks("again " * 3000))
    blocks = [view.document().findBlockByNumber(i).length() for i in range(view.document().blockCount())]
    assert max(blocks) <= 4_100  # Qt lays a block out again as it grows: none grows without bound
    assert view.toPlainText().replace("\n", "") == "again " * 3000


def test_the_view_follows_new_text_only_from_the_bottom(qtbot) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    view.show_turns([turn("long", *[f"line {i}" for i in range(200)])])
    settle(qtbot, view)
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    view.stream((), ("<p>more</p>",))
    assert bar.value() == bar.maximum()  # at the bottom: it follows
    bar.setValue(bar.maximum() // 3)  # the user scrolls up to read
    reading = bar.value()
    view.stream(("<p>settled</p>",), ("<p>still more</p>",))
    assert bar.value() == reading  # and stays where they are


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


def test_a_streaming_reply_looks_like_the_finished_one_and_the_meter_moves(qtbot, demo_model: Path) -> None:
    reply = "**Bold** start.\n\n" + " ".join(f"word{i}" for i in range(300)) + "\n\n```python\nx = 1\n```\n"
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine(reply=reply))
    load(qtbot, win)
    chat = win.chat
    chat.max_tokens = 1000
    chat.input.setPlainText("go")
    seen: list[tuple[str, int]] = []
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
        chat.send()
        qtbot.waitUntil(lambda: chat.streaming and "word50" in chat.transcript.toPlainText(), timeout=TIMEOUT)
        seen.append((chat.transcript.toPlainText(), chat.context_meter.value()))
        qtbot.waitUntil(lambda: chat.streaming and "word250" in chat.transcript.toPlainText(), timeout=TIMEOUT)
        seen.append((chat.transcript.toPlainText(), chat.context_meter.value()))
    (early, used_early), (_, used_later) = seen
    assert "**" not in early and "Bold start." in early  # rendered as it streams, not as raw markdown
    assert used_later > used_early > 0  # the meter moves while the reply is written
    assert chat.context_meter.value() == chat.tokens_used and "```" not in chat.transcript.toPlainText()
    win.close()
