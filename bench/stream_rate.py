"""Streaming rate: the chat's tokens/s as the engine client receives them, beside llama-bench's tg128 on the same
loaded model, and how far a reply runs on after Stop.

One run, side by side, on the demo model with 2 threads, through the engine client and its worker process (what
the window's chat is given, without the window): in turns, a chat reply of 128 tokens (the chat's own request:
its chat format, seeded sampling, end of turn ignored) timed as its tokens reach the client's listener, then the
engine's llama-bench test tg128 (``protocol.Bench``: 128 single-token decodes of random tokens, no sampling, 5
repetitions after a warm-up, as llama-bench times them). The chat's rate is between its first and last token's
arrival; each round gives its ratio to that round's tg128, and the medians of the rounds are the figures, beside
the ratio of each side's best round (what a machine shared with other work still shows).
llama.cpp's decode rate for the same reply (engine_decode_tok_s, what the chat's stats line shows) is printed too.
Last, one reply is stopped as soon as two of its tokens have arrived: the tokens counted after that are the ones
already decoded or in flight when Stop was sent.

    .venv/bin/python bench/stream_rate.py [--tokens 128] [--rounds 5] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core import protocol as p  # noqa: E402
from gui.core.params import LoadSettings  # noqa: E402
from gui.services.engine_client import ClientEvent, SyncEngine  # noqa: E402

DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
QUESTION = (p.ChatMessage("user", "Tell me a long story about a lighthouse keeper."),)
SAMPLING = p.Sampling(temperature=0.7, seed=42)
TIMEOUT_S = 300


class Stamped(SyncEngine):
    """SyncEngine whose listener notes when each token reaches the client, on its reader thread. Tokens are not
    queued: the waiting thread is woken by the other events only, as the window's chat is woken once per frame
    rather than once per token."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.reached = threading.Event()  # set when ``notify_at`` tokens have arrived
        self.notify_at = 0
        self.client.set_listener(self._on_event)

    def __enter__(self) -> Stamped:
        super().__enter__()
        return self

    def _on_event(self, event: ClientEvent) -> None:
        if not isinstance(event, p.Token):
            self.events.put(event)
            return
        self.arrivals.append(time.perf_counter())
        if len(self.arrivals) == self.notify_at:
            self.reached.set()


def chat_reply(engine: Stamped, n_tokens: int) -> tuple[float, p.ReplyStats]:
    """One chat reply of exactly ``n_tokens``: its rate at the client, and the engine's stats of it."""
    engine.arrivals.clear()
    request = engine.client.generate(QUESTION, n_tokens, SAMPLING, ignore_eos=True)
    while not isinstance(event := engine.next_event(TIMEOUT_S), p.Done) or event.request_id != request:
        if isinstance(event, p.GenerateFailed):
            raise SystemExit(f"the reply failed: {event.error}")
    stats = event.stats
    assert stats.n_gen == n_tokens and stats.finish_reason == "length", stats
    arrivals = engine.arrivals[:n_tokens]  # a last, empty, piece may follow: held-back text, none with ignore_eos
    return (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]), stats


def tg(engine: Stamped, n_tokens: int, reps: int) -> float:
    """llama-bench's tg test on the loaded context: its mean tokens/s over the repetitions."""
    request = engine.client.bench(n_prompt=0, n_gen=n_tokens, reps=reps)
    while not isinstance(event := engine.next_event(TIMEOUT_S), p.BenchDone) or event.request_id != request:
        if isinstance(event, p.BenchFailed):
            raise SystemExit(f"the benchmark failed: {event.error}")
    return statistics.mean(event.samples_tok_s)


def after_stop(engine: Stamped) -> tuple[int, int]:
    """A long reply stopped once two tokens arrived: (tokens when Stop was sent, tokens in all)."""
    engine.arrivals.clear()
    engine.reached.clear()
    engine.notify_at = 2
    request = engine.client.generate(QUESTION, 2000, SAMPLING, ignore_eos=True)
    if not engine.reached.wait(TIMEOUT_S):
        raise SystemExit("no tokens arrived")
    shown = len(engine.arrivals)
    engine.client.stop(request)
    while not isinstance(event := engine.next_event(TIMEOUT_S), p.Done) or event.request_id != request:
        pass
    assert event.stats.finish_reason == "cancelled", event.stats
    return shown, event.stats.n_gen


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="tokens per chat reply and per tg repetition")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5, help="tg repetitions per round")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", type=Path, default=DEMO)
    args = parser.parse_args()
    if not args.model.is_file():
        raise SystemExit(f"no model at {args.model} (make demo-model fetches the demo model)")

    with Stamped() as engine:
        engine.client.load(args.model, LoadSettings(n_threads=args.threads, n_ctx=4096))
        engine.expect(p.Loaded, TIMEOUT_S)
        build = engine.client.build
        print(f"model {args.model.name}, {args.threads} threads, {build.describe() if build else 'engine'}")
        print(f"{args.rounds} rounds: a chat reply of {args.tokens} tokens, then tg{args.tokens} ({args.reps} reps)")
        tg_head = f"tg{args.tokens} tok/s"
        print(f"{'round':>5} {'chat tok/s':>11} {tg_head:>12} {'ratio':>7} {'llama.cpp decode tok/s':>23}")
        chats, tgs, ratios, decodes = [], [], [], []
        chat_reply(engine, min(args.tokens, 16))  # warm-up: the first reply's pages and caches
        for i in range(args.rounds):
            chat, stats = chat_reply(engine, args.tokens)
            bench = tg(engine, args.tokens, args.reps)
            chats.append(chat)
            tgs.append(bench)
            ratios.append(chat / bench)
            decodes.append(stats.engine_decode_tok_s)
            print(f"{i + 1:>5} {chat:>11.1f} {bench:>12.1f} {chat / bench:>7.3f} {stats.engine_decode_tok_s:>23.1f}")
        print(
            f"median: chat {statistics.median(chats):.1f} tok/s, tg{args.tokens} {statistics.median(tgs):.1f} tok/s, "
            f"ratio {statistics.median(ratios):.3f} (target >= 0.97); "
            f"llama.cpp decode {statistics.median(decodes):.1f} tok/s"
        )
        # On a machine that other work shares, a round is slowed at random: each side's best round is its speed
        # with the machine to itself.
        print(
            f"best: chat {max(chats):.1f} tok/s, tg{args.tokens} {max(tgs):.1f} tok/s, "
            f"ratio {max(chats) / max(tgs):.3f} (target >= 0.97)"
        )
        shown, total = after_stop(engine)
        print(f"Stop with {shown} tokens received: {total - shown} more arrived, {total} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
