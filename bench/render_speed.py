"""Time rendering a finished 20 KB reply (headings, lists, a table, code blocks) to Qt rich text.

Cold: the code blocks are highlighted for the first time. Warm: they come from the highlight cache,
as when a reply that streamed is re-rendered at its end; the target for that is 20 ms. Prints the
best of five in ms and the ratio to the target. Run: ``.venv/bin/python bench/render_speed.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core import markdown_render  # noqa: E402
from gui.core.markdown_render import render_markdown  # noqa: E402

TARGET_MS = 20.0
RUNS = 5


def reply_20k() -> str:
    para = (
        "The planner estimates the **KV cache** from the header alone: each layer stores keys and values "
        "for every token, so doubling `n_ctx` doubles it. See [the docs](https://example.com/docs) for "
        "*details*; quantised caches need flash attention.\n\n"
    )
    code = (
        "```python\ndef kv_bytes(n_ctx: int, n_layer: int, n_embd_kv: int) -> int:\n"
        "    # K and V for every layer\n    return 2 * n_ctx * n_layer * n_embd_kv * 2\n```\n\n"
    )
    items = "1. Lower the context.\n2. Use a `q8_0` cache.\n3. Offload fewer layers:\n   - step down by 2\n\n"
    unit = (
        "## Section\n\n" + para * 3 + code + items + "> Tip: watch the VRAM bar.\n\n| k | v |\n|---|---|\n| a | 1 |\n\n"
    )
    return (unit * 40)[: 20 * 1024]


def render_ms(text: str) -> float:
    t0 = time.perf_counter()
    render_markdown(text)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    text = reply_20k()
    cold = []
    for _ in range(RUNS):
        markdown_render._highlight_cached.cache_clear()
        cold.append(render_ms(text))
    warm = [render_ms(text) for _ in range(RUNS)]
    print(f"{len(text.encode()) / 1024:.0f} KB reply, best of {RUNS}:")
    for label, ms in (("cold (highlighting)", min(cold)), ("warm (cached blocks)", min(warm))):
        print(f"{label:21s} {ms:6.1f} ms  ({ms / TARGET_MS:4.2f} of the {TARGET_MS:g} ms target)")


if __name__ == "__main__":
    main()
