"""The API's cost over the engine: a streamed reply's tok/s as the HTTP client receives it against llama.cpp's own
decode rate for the same reply, time to first byte and to the first token's event against the engine's own time to
first token; and the aggregate tok/s of 8 clients at once with 4 parallel slots (their replies decoded together)
against 1 client, with 8 clients on one slot (answered in turn) beside them.

One run, on the demo model: the real engine worker and the API server on 127.0.0.1 (an asyncio loop on a thread,
as the window's), read with raw HTTP so that every event's arrival is timed where it lands. Each streamed reply is
a plain completion of a fixed prompt at temperature 0; its tokens are counted as events with text, its rate taken
between the first and the last (as the engine's is between its first and last token).

    .venv/bin/python bench/api_speed.py [--tokens 128] [--replies 3] [--threads 2] [--clients 8] [--slots 4]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from api_kit import ServedEngine  # noqa: E402

from gui.core.params import LoadSettings  # noqa: E402

DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "Here is a long story about a lighthouse keeper and the sea. Once upon a time"


def stream(base: str, model: str, tokens: int, prompt: str = PROMPT) -> dict[str, float]:
    """One streamed completion, timed as the client sees it."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": tokens, "temperature": 0, "stream": True})
    sent = time.perf_counter()
    conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    first_byte = time.perf_counter()
    arrivals: list[float] = []
    while line := response.readline():
        if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
            continue
        event = json.loads(line[6:])
        if event["choices"] and event["choices"][0]["text"]:
            arrivals.append(time.perf_counter())
    conn.close()
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else 0.0
    return {
        "ttfb_ms": (first_byte - sent) * 1000,
        "first_token_ms": (arrivals[0] - sent) * 1000 if arrivals else 0.0,
        "client_tok_s": rate,
        "n": len(arrivals),
        "elapsed_s": (arrivals[-1] if arrivals else first_byte) - sent,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--replies", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--slots", type=int, default=4)
    args = parser.parse_args()
    # The engine is loaded with the slots; one server answers in turn on one of them (the chat's way, as the first
    # figures are taken), the other serves every slot at once. Each sequence has 2048 cells either way.
    settings = LoadSettings(
        n_ctx=2048 * args.slots, n_batch=256, n_ubatch=256, n_threads=args.threads, n_parallel=args.slots
    )
    served = ServedEngine(DEMO, settings, Path(tempfile.mkdtemp(prefix="tightfit-bench-")))
    try:
        base = served.serve(slots=1)
        slotted = served.serve()
        model = DEMO.name.removesuffix(".gguf")
        stream(base, model, 8)  # warm-up: the prompt cache and the first allocations
        while not served.activity.empty():
            served.activity.get()

        print(f"demo model, {args.threads} threads, {args.tokens}-token streamed replies, {args.replies} replies")
        print(f"{'reply':>5} {'client tok/s':>12} {'engine tok/s':>12} {'ratio':>6} {'TTFB ms':>8} "
              f"{'1st token ms':>12} {'engine TTFT ms':>14}")  # fmt: skip
        ratios = []
        for index in range(args.replies):
            # A different prompt each time, so that the engine reads it rather than the prompt cache.
            seen = stream(base, model, args.tokens, f"{PROMPT} ({index})")
            served.activity.get(timeout=60)  # started
            done = served.activity.get(timeout=600)
            ratio = seen["client_tok_s"] / done.decode_tok_s if done.decode_tok_s else 0.0
            ratios.append(ratio)
            print(
                f"{index + 1:>5} {seen['client_tok_s']:>12.1f} {done.decode_tok_s:>12.1f} {ratio:>6.3f} "
                f"{seen['ttfb_ms']:>8.1f} {seen['first_token_ms']:>12.1f} {done.ttft_ms:>14.1f}"
            )
        print(f"median client/engine rate: {statistics.median(ratios):.3f} (goal >= 0.95)")

        print(f"\naggregate, {args.tokens}-token streamed replies, every client at once:")
        print(f"{'clients':>7} {'slots':>5} {'tokens':>6} {'seconds':>7} {'tok/s':>7} {'vs 1 client':>11}")
        single = 0.0
        for clients, url in ((1, slotted), (args.clients, base), (args.clients, slotted)):
            slots = args.slots if url == slotted else 1
            stream(url, model, 8)  # warm-up: this server's first request
            started = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                prompts = [f"{PROMPT} [{i}]" for i in range(clients)]
                results = list(pool.map(lambda prompt, url=url: stream(url, model, args.tokens, prompt), prompts))
            elapsed = time.perf_counter() - started
            total = sum(r["n"] for r in results)
            rate = total / elapsed
            single = single or rate
            print(f"{clients:>7} {slots:>5} {total:>6} {elapsed:>7.2f} {rate:>7.1f} {rate / single:>11.2f}")
    finally:
        served.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
