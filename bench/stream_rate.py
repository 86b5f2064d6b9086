"""Streaming rate and responsiveness: tokens/s as the chat pane receives them vs llama.cpp's decode rate,
the longest stall of the UI event loop while a reply streams, and how far a reply runs on after Stop.

One run, side by side, on the demo model with 2 threads: the real window's chat pane (offscreen) asks
the real engine worker for replies of a fixed length; for each reply it records when tokens reach the
pane, and llama.cpp reports its own decode rate (decoded tokens / decode time) for the same tokens.
A 2 ms timer on the UI thread measures the gaps between its ticks: a gap much longer than 2 ms is time
the event loop could not answer the user. The conversation grows reply by reply, so the markdown
re-render at the end of each reply covers the whole transcript. The pane's updates per reply show it
streamed rather than arriving at the end. Last, one reply is stopped as soon as the pane shows it:
the tokens counted after that are the ones already decoded or in flight when Stop was pressed.

    .venv/bin/python bench/stream_rate.py [--tokens 256] [--replies 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gui.core import protocol as p  # noqa: E402
from gui.core.params import LoadSettings  # noqa: E402
from gui.ui.main_window import MainWindow  # noqa: E402

DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def wait_for(signal: object, timeout_s: float = 300) -> list[object]:
    loop = QEventLoop()
    got: list[object] = []

    def done(*args: object) -> None:
        got.extend(args)
        loop.quit()

    signal.connect(done)  # type: ignore[attr-defined]
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    signal.disconnect(done)  # type: ignore[attr-defined]
    if not got:
        raise SystemExit(f"timed out waiting for {signal}")
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--replies", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    app = QApplication.instance() or QApplication([])
    window = MainWindow(DEMO.parent, LoadSettings(n_threads=args.threads, n_ctx=8192))
    window.show()
    window.start(select=DEMO)
    wait_for(window.picker.scanned)
    window.load_selected()
    loaded = wait_for(window.model_loaded)[0]
    assert isinstance(loaded, p.Loaded)
    pane = window.chat
    pane.max_tokens = args.tokens
    pane.ignore_eos = True
    pane.sampling = p.Sampling(temperature=0.7, seed=42)
    pane.n_ctx = loaded.n_ctx

    print(f"model {DEMO.name}, {args.threads} threads, {args.tokens} tokens per reply, {args.replies} replies")
    print(
        f"{'reply':>5} {'pane tok/s':>11} {'llama.cpp decode tok/s':>23} {'ratio':>7} {'max UI stall ms':>16} "
        f"{'updates':>8}"
    )
    ratios, pane_rates, engine_rates, stalls = [], [], [], []
    ticks: list[float] = []
    probe = QTimer()
    probe.setInterval(2)
    probe.timeout.connect(lambda: ticks.append(time.perf_counter()))
    for i in range(args.replies):
        pane.input.setPlainText("Tell me a long story about a lighthouse keeper.")
        ticks.clear()
        probe.start()
        pane.send()
        stats = wait_for(pane.reply_finished)[0]
        app.processEvents()  # the end-of-reply re-render runs in this window too
        probe.stop()
        stall_ms = max((b - a for a, b in itertools.pairwise(ticks)), default=0.0) * 1000
        stalls.append(stall_ms)
        assert isinstance(stats, p.ReplyStats) and stats.n_gen == args.tokens, stats
        arrivals = pane.arrivals
        received = sum(n for _, n in arrivals)
        assert received >= args.tokens, (received, args.tokens)
        # Rate between the first and the last update the pane handled: tokens after the first update.
        span = arrivals[-1][0] - arrivals[0][0]
        pane_rate = (received - arrivals[0][1]) / span
        ratio = pane_rate / stats.engine_decode_tok_s
        pane_rates.append(pane_rate)
        engine_rates.append(stats.engine_decode_tok_s)
        ratios.append(ratio)
        print(
            f"{i + 1:>5} {pane_rate:>11.1f} {stats.engine_decode_tok_s:>23.1f} {ratio:>7.3f} {stall_ms:>16.1f} "
            f"{len(arrivals):>8}"
        )
    print(
        f"median: pane {statistics.median(pane_rates):.1f} tok/s, llama.cpp {statistics.median(engine_rates):.1f} "
        f"tok/s, ratio {statistics.median(ratios):.3f} (target >= 0.95); "
        f"longest UI stall {max(stalls):.1f} ms (target <= 30 ms)"
    )

    pane.input.setPlainText("Tell me a long story about a lighthouse keeper.")
    pane.send()
    wait_for(pane.live_rate)  # emitted once the pane shows more than one token
    shown = sum(n for _, n in pane.arrivals)
    pane.stop()
    stopped = wait_for(pane.reply_finished)[0]
    assert isinstance(stopped, p.ReplyStats) and stopped.finish_reason == "cancelled", stopped
    print(f"Stop with {shown} tokens shown: {stopped.n_gen - shown} more arrived, {stopped.n_gen} in all")
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
