"""How long the window's UI thread is blocked at once when a 20k-token reply is shown, old way and new.

Old: the whole conversation rendered as one HTML document and set on the view (what the chat pane did
at every turn boundary). New: the transcript (gui/ui/transcript.py) laid out a few blocks per pass of
the event loop. Both run here, on the same reply, in the same process; the figure that matters is the
longest single block of the UI thread (a frame is 16 ms), and the ratio old/new.

Three replies of about 20,000 words: paragraphs with code, one long code block, and one paragraph that
never breaks a line (what a model stuck in a loop writes).

Run: ``.venv/bin/python bench/long_reply.py``
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication, QTextBrowser  # noqa: E402

from gui.core.markdown_render import render_markdown, render_markdown_blocks  # noqa: E402
from gui.ui.transcript import Transcript, TurnView  # noqa: E402

FRAME_MS = 16.0


def replies() -> dict[str, str]:
    para = "The lighthouse keeper walked up the **stairs**, counting each one, and thought about the sea. " * 8
    code = "```python\n" + "\n".join(f"def step_{i}(x):\n    return x * {i}" for i in range(6)) + "\n```\n"
    mixed = ((para + "\n\n" + code + "\n") * 200)[:130_000]
    lines = "\n".join(f"value_{i} = compute({i}) + offset  # line {i}" for i in range(4000))
    long_code = f"```python\n{lines}\n```"
    wall = "again and again " * 10_000
    return {"paragraphs and code": mixed, "one long code block": long_code, "one endless paragraph": wall}


def old_way(app: QApplication, text: str) -> float:
    view = QTextBrowser()
    view.resize(800, 600)
    view.show()
    app.processEvents()
    started = time.perf_counter()
    view.setHtml("<p><b>You</b></p><p>go on</p><p><b>Model</b></p>" + render_markdown(text))
    app.processEvents()
    blocked = time.perf_counter() - started
    view.close()
    return blocked * 1000


def new_way(app: QApplication, text: str) -> float:
    """The longest single pass: rendering the pieces (on a worker thread in the window), then each
    drain of the transcript's queue and the event processing between them."""
    view = Transcript()
    view.resize(800, 600)
    view.show()
    app.processEvents()
    pieces = render_markdown_blocks(text)  # the chat pane does this off the UI thread for a long reply
    worst = 0.0
    started = time.perf_counter()
    view.show_turns([TurnView("you", ("<p><b>You</b></p>", "<p>go on</p>")), TurnView("reply", pieces)])
    worst = time.perf_counter() - started
    while view.pending:
        started = time.perf_counter()
        app.processEvents()
        worst = max(worst, time.perf_counter() - started)
    view.close()
    return worst * 1000


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    print(f"longest block of the UI thread (a frame is {FRAME_MS:.0f} ms):")
    for name, text in replies().items():
        words = len(text.split())
        old = old_way(app, text)
        new = new_way(app, text)
        print(
            f"  {name:22} {words:6,} words, {len(text) / 1024:5.0f} KB:  old {old:7.1f} ms   new {new:6.1f} ms"
            f"   ({old / new:4.1f}x less; new is {new / FRAME_MS:.2f} of a frame)"
        )


if __name__ == "__main__":
    main()
