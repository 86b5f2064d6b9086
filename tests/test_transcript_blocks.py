"""Each message in the conversation is its own block with its own format: a reply that ends in a list,
a quote, a code block or a table does not pull the stats line, the next heading or the next message
into that list or format, whether the reply streamed in, was stopped, or came back from the history."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtGui import QTextBlock, QTextCursor, QTextFormat
from window_kit import TIMEOUT, load, open_window

from gui.core.chat import Conversation, Turn
from gui.core.protocol import ReplyStats
from gui.ui.transcript import Transcript

ENDINGS = {
    "numbered list": "Steps:\n\n1. Boil water\n2. Add the tea",
    "bulleted list": "You need:\n\n- water\n- tea",
    "nested list": "Plan:\n\n1. first\n   - inner point\n2. second",
    "quote": "As they say:\n\n> the end is near\n> and closer still",
    "code": "Run this:\n\n```python\nx = 1\nprint(x)\n```",
    "table": "| quant | size |\n|---|---|\n| Q4_1 | 86 MiB |",
}
STATS = ReplyStats(12, 12, 20, 50.0, 40.0, 400.0, 48.0, "stop")


def blocks(view: Transcript) -> list[QTextBlock]:
    found, block = [], view.document().firstBlock()
    while block.isValid():
        found.append(block)
        block = block.next()
    return found


def standing_alone(block: QTextBlock) -> list[str]:
    """What of another element's format a block carries: empty for a paragraph of its own."""
    wrong = []
    cursor = QTextCursor(block)
    fmt = block.blockFormat()
    if block.textList() is not None:
        wrong.append("in a list")
    if cursor.currentTable() is not None:
        wrong.append("in a table")
    if cursor.currentFrame() != block.document().rootFrame():
        wrong.append("in a frame")
    if fmt.intProperty(QTextFormat.Property.BlockQuoteLevel) or fmt.leftMargin() or fmt.indent():
        wrong.append("indented as a quote")
    if fmt.nonBreakableLines() or fmt.background().style().value:
        wrong.append("laid out as code")
    it = block.begin()
    while not it.atEnd():
        families = it.fragment().charFormat().fontFamilies() or []
        if "monospace" in families:
            wrong.append(f"{it.fragment().text()!r} in the code font")
        it += 1
    return wrong


def messages(view: Transcript) -> list[tuple[str, list[str]]]:
    """The blocks that are no reply's (headings, questions, stats and notes, a plain answer), with what
    each carries of another element's format."""
    own = {"You", "Model", "first question", "second question", "third question", "A plain answer."}
    return [
        (b.text(), standing_alone(b))
        for b in blocks(view)
        if b.text() in own or "tokens" in b.text() or "stopped by you" in b.text()
    ]


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_reopened_conversation_keeps_each_message_apart(qtbot, demo_model: Path, ending: str) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    chat = win.chat
    reply = ENDINGS[ending]
    chat.set_conversation(
        Conversation(
            turns=[
                Turn("user", "first question"),
                Turn("assistant", reply, stats=STATS),
                Turn("user", "second question"),
                Turn("assistant", reply, note="stopped by you"),
                Turn("user", "third question"),
                Turn("assistant", "A plain answer."),
            ]
        )
    )
    qtbot.waitUntil(lambda: chat.transcript.pending == 0, timeout=TIMEOUT)
    shown = messages(chat.transcript)
    texts = [text for text, _ in shown]
    assert texts.count("You") == 3 and texts.count("Model") == 3 and "A plain answer." in texts
    assert any("20 tokens" in text for text in texts) and any("stopped by you" in text for text in texts)
    assert [(text, wrong) for text, wrong in shown if wrong] == []
    win.close()


@pytest.mark.parametrize("ending", ["numbered list", "code"])
def test_a_streamed_reply_leaves_the_next_message_alone(qtbot, demo_model: Path, ending: str) -> None:
    reply = ENDINGS[ending]
    engine = FakeEngine(reply=reply)  # streamed word by word: the list or code block is the last block written
    win = open_window(qtbot, demo_model.parent, demo_model, engine=engine)
    load(qtbot, win)
    chat = win.chat
    for question in ("first question", "second question"):
        chat.input.setPlainText(question)
        with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
            chat.send()
        engine.reply = "A plain answer."
    qtbot.waitUntil(lambda: chat.transcript.pending == 0, timeout=TIMEOUT)
    shown = messages(chat.transcript)
    texts = [text for text, _ in shown]
    assert texts.count("You") == 2 and "second question" in texts and "A plain answer." in texts
    assert sum("tokens" in text for text in texts) == 2  # both replies' stats lines
    assert [(text, wrong) for text, wrong in shown if wrong] == []
    # The reply's own list and code keep their form.
    kept = [b for b in blocks(chat.transcript) if b.text() in ("Add the tea", "print(x)")]
    assert kept and (kept[0].textList() is not None or kept[0].blockFormat().nonBreakableLines())
    win.close()
